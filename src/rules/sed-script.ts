/**
 * Whether a sed script may run a command: its `e` command, or the `e` flag of an `s` command,
 * whatever the delimiter. The script is read command by command (GNU sed's one-line syntax);
 * what the reader does not follow counts as running one.
 */
export function sedMayRun(script: string): boolean {
  return sedEffect(script) === "runs";
}

/**
 * What a sed script may do beyond printing: `runs` a command (as `sedMayRun` says), else
 * `writes` a file (`w`, `W`, the `w` flag of `s`), else nothing (`undefined`).
 */
export function sedEffect(script: string): "runs" | "writes" | undefined {
  let writes = false;
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
        if (!until("/")) return "runs";
      } else if (at() === "\\") {
        const delimiter = script[i + 1] ?? "";
        i += 2;
        if (!until(delimiter)) return "runs";
      } else i++;
      skip(/[IM]/);
      skip(/\s/);
    }
    skip(/[\s!]/);
    const command = at();
    i++;
    if (command === "" || command === "{" || command === "}" || command === ";") continue;
    if (command === "e") return "runs";
    if (command === "s" || command === "y") {
      const delimiter = at();
      if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return "runs";
      i++;
      if (!until(delimiter) || !until(delimiter)) return "runs";
      if (command === "y") continue;
      const flags = /^[a-zA-Z0-9]*/.exec(script.slice(i))?.[0] ?? "";
      if (flags.includes("e")) return "runs";
      i += flags.length;
      if (flags.includes("w")) {
        writes = true;
        restOfLine();
      }
    } else if ("aicrRwW#".includes(command)) {
      writes ||= command === "w" || command === "W";
      restOfLine();
    } else if ("btTv:".includes(command)) skip(/[^;\n]/);
    else if (!"dDgGhHlnNpPqQxz=F".includes(command)) return "runs";
  }
  return writes ? "writes" : undefined;
}

/**
 * Whether a sed script only prints what it reads: a positive model, read the way GNU sed reads
 * its one-line syntax. Addresses (a line, `$`, `first~step`, `/regex/` or `\cregexc` with `I`
 * and `M`, a range with `,N`, `,+N`, `,~N` or a regex, `!`), the commands `p P = l q Q d D n N
 * g G h H x z F`, groups `{ … }`, comments, and `s`/`y` with the flags `g p i I m M` and a
 * number. Anything else (`w`, `W`, `e`, `r`, `R`, `a`, `i`, `c`, labels and branches, the `w`
 * and `e` flags, a newline inside a regex, text this reader does not follow) is not.
 */
export function sedPrintsOnly(script: string): boolean {
  let i = 0;
  let depth = 0;
  const at = () => script[i] ?? "";
  const skipBlanks = () => {
    while (at() === " " || at() === "\t") i++;
  };
  /** Past text up to an unescaped `end` on the same line; false when it never comes. */
  const until = (end: string): boolean => {
    while (i < script.length && at() !== end && at() !== "\n") i += at() === "\\" ? 2 : 1;
    if (at() !== end) return false;
    i++;
    return true;
  };
  const digits = () => {
    const start = i;
    while (/\d/.test(at())) i++;
    return i > start;
  };
  const regex = (): boolean => {
    if (at() === "/") i++;
    else if (at() === "\\") {
      const delimiter = script[i + 1] ?? "";
      if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return false;
      i += 2;
      if (!until(delimiter)) return false;
      while (at() === "I" || at() === "M") i++;
      return true;
    } else return false;
    if (!until("/")) return false;
    while (at() === "I" || at() === "M") i++;
    return true;
  };
  /** One address, or false when there is none or it cannot be read. */
  const address = (): boolean => {
    if (at() === "$") {
      i++;
      return true;
    }
    if (/\d/.test(at())) {
      digits();
      if (at() === "~") {
        i++;
        return digits();
      }
      return true;
    }
    return (at() === "/" || at() === "\\") && regex();
  };
  while (i < script.length) {
    if (/[\s;]/.test(at())) {
      i++;
      continue;
    }
    if (at() === "#") {
      while (i < script.length && at() !== "\n") i++;
      continue;
    }
    if (/[\d$/\\]/.test(at())) {
      if (!address()) return false;
      skipBlanks();
      if (at() === ",") {
        i++;
        skipBlanks();
        if (at() === "+" || at() === "~") {
          i++;
          if (!digits()) return false;
        } else if (!address()) return false;
      }
      skipBlanks();
    }
    if (at() === "!") {
      i++;
      skipBlanks();
    }
    const command = at();
    i++;
    if (command === "{") {
      depth++;
      continue;
    }
    if (command === "}") {
      if (--depth < 0) return false;
    } else if (command === "s" || command === "y") {
      const delimiter = at();
      if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return false;
      i++;
      if (!until(delimiter) || !until(delimiter)) return false;
      if (command === "s") while (/[gpiImM\d]/.test(at())) i++;
    } else if (command === "l" || command === "q" || command === "Q") {
      skipBlanks();
      digits();
    } else if (!"pP=dDnNgGhHxzF".includes(command)) return false;
    skipBlanks();
    // a command ends at `;`, a newline, `}` or the end of the script
    if (i < script.length && !/[;\n}]/.test(at())) return false;
  }
  return depth === 0;
}
