/**
 * Whether a sed script may run a command: its `e` command, or the `e` flag of an `s` command,
 * whatever the delimiter. The script is read command by command (GNU sed's one-line syntax);
 * what the reader does not follow counts as running one.
 */
export function sedMayRun(script: string): boolean {
  let i = 0;
  const at = () => script[i] ?? "";
  const skip = (chars: RegExp) => {
    while (i < script.length && chars.test(at())) i++;
  };
  /** Past text up to an unescaped `end`; false when it never comes. */
  const until = (end: string): boolean => {
    while (i < script.length && at() !== end && at() !== "\n") i += at() === "\\" ? 2 : 1;
    if (at() !== end) return false;
    i++;
    return true;
  };
  const restOfLine = () => {
    while (i < script.length && at() !== "\n") i++;
  };
  while (i < script.length) {
    skip(/[\s;{}!]/);
    if (i >= script.length) break;
    // addresses: a line number, $, /regex/ or \cregexc, first~step, a range
    while (/[\d$/\\,~+]/.test(at())) {
      if (at() === "/") {
        i++;
        if (!until("/")) return true;
      } else if (at() === "\\") {
        const delimiter = script[i + 1] ?? "";
        i += 2;
        if (!until(delimiter)) return true;
      } else i++;
      skip(/[IM]/);
      skip(/\s/);
    }
    skip(/[\s!]/);
    const command = at();
    i++;
    if (command === "" || command === "}" || command === ";") continue;
    if (command === "e") return true;
    if (command === "s" || command === "y") {
      const delimiter = at();
      if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return true;
      i++;
      if (!until(delimiter) || !until(delimiter)) return true;
      if (command === "y") continue;
      const flags = /^[a-zA-Z0-9]*/.exec(script.slice(i))?.[0] ?? "";
      if (flags.includes("e")) return true;
      i += flags.length;
      if (flags.includes("w")) restOfLine();
    } else if ("aicrRwW#".includes(command)) restOfLine();
    else if ("btTv:".includes(command)) skip(/[^;\n]/);
    else if (!"dDgGhHlnNpPqQxz=F".includes(command)) return true;
  }
  return false;
}
