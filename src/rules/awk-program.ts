/**
 * `awk [-F FS] [-v NAME=VALUE] [--] PROGRAM [files or NAME=VALUE]` with a program that only
 * prints (`awkPrintsOnly`); no `-f`, `-E`, `-i`, `-l` or any other option.
 */
export function awkWords(args: string[]): boolean {
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "--") {
      i++;
      break;
    }
    if (!arg.startsWith("-") || arg === "-") break;
    if (arg === "-F" || arg === "-v") i++;
    else if (!/^-[Fv]./.test(arg)) return false;
  }
  const program = args[i];
  return program !== undefined && awkPrintsOnly(program);
}

/**
 * Whether an awk program only reads its input and prints: a positive model, read token by token.
 * Not allowed: `system`, `getline` in any form, a pipe (`|`, `|&`), a redirect of `print` or
 * `printf` (a `>` or `>>` outside parentheses from `print` to the next `;` or `}`), `@` (gawk's
 * `@load`, `@include`, indirect calls), a character outside awk's, a string or regex that does
 * not end on its line. `/` starts a regex only after a token no division can follow (`(`, `,`,
 * `{`, `}`, `;`, a newline, `!`, `~`, `&&`, `||`, the start): a division read as a regex could
 * hide a redirect, a regex read as a division only asks more. When unsure, it asks.
 */
export function awkPrintsOnly(program: string): boolean {
  const tokens = awkTokens(program);
  if (!tokens) return false;
  let depth = 0;
  let printDepth: number | undefined;
  for (const token of tokens) {
    if (token === "system" || token === "getline" || token === "|" || token === "|&") return false;
    if (token === "(" || token === "[") depth++;
    else if (token === ")" || token === "]") depth--;
    else if (token === "print" || token === "printf") printDepth ??= depth;
    else if (token === ";" || token === "}" || token === "{") printDepth = undefined;
    else if ((token === ">" || token === ">>") && printDepth !== undefined && depth <= printDepth)
      return false;
  }
  return true;
}

/** Tokens after which `/` starts a regex: nothing there could be divided. */
const beforeRegex = new Set(["(", ",", "{", "}", ";", "\n", "!", "~", "!~", "&&", "||"]);

const operators = [
  ...["||", "&&", "|&", ">>", ">=", "<=", "==", "!=", "!~", "++", "--", "+=", "-=", "*="],
  ...["/=", "%=", "^=", "**"],
];

/**
 * The program's tokens: names, numbers, operators, `"…"` strings as `"`, regexes as `/`, each
 * newline as `\n`; comments and backslash-newlines dropped. `undefined` when a character is not
 * awk's or a string or regex does not end on its line.
 */
function awkTokens(program: string): string[] | undefined {
  const tokens: string[] = [];
  let i = 0;
  const at = (offset = 0) => program[i + offset] ?? "";
  /** Past a string or regex body up to `end`; false when the line ends first. */
  const until = (end: string): boolean => {
    while (i < program.length && at() !== end && at() !== "\n") i += at() === "\\" ? 2 : 1;
    if (at() !== end) return false;
    i++;
    return true;
  };
  while (i < program.length) {
    const char = at();
    if (char === " " || char === "\t" || char === "\r") i++;
    else if (char === "\\" && at(1) === "\n") i += 2;
    else if (char === "#") while (i < program.length && at() !== "\n") i++;
    else if (char === '"') {
      i++;
      if (!until('"')) return undefined;
      tokens.push('"');
    } else if (char === "/" && beforeRegex.has(tokens.at(-1) ?? ";")) {
      i++;
      if (!until("/")) return undefined;
      tokens.push("/");
    } else if (/[A-Za-z_]/.test(char)) {
      const name = /^[A-Za-z_]\w*/.exec(program.slice(i))?.[0] ?? char;
      tokens.push(name);
      i += name.length;
    } else if (/[\d.]/.test(char)) {
      const number = /^[\d.]+([eE][-+]?\d+)?/.exec(program.slice(i))?.[0] ?? char;
      tokens.push("0");
      i += number.length;
    } else {
      const operator = operators.find((op) => program.startsWith(op, i));
      if (operator) {
        tokens.push(operator);
        i += operator.length;
      } else if ("\n{}()[];,+-*/%^!<>=~?:$|".includes(char)) {
        tokens.push(char);
        i++;
      } else return undefined;
    }
  }
  return tokens;
}
