/**
 * A rule names a command by its words: the program and its leading arguments, compared word for
 * word with the command as the shell will run it (quotes and escapes removed). No glob syntax: a
 * `*` in a rule is the character `*`. A rule matches a command whose words start with its words
 * (`npm test` matches `npm test -- --watch`); an `exact` rule (what "always" saves) matches those
 * words and nothing more. Deny wins over allow. `allow` covers a run inside the sandbox (or with
 * no sandbox at all); only `allow-unsandboxed` covers a call that asks to leave a working sandbox
 * (`outside_sandbox`), and it covers nothing else.
 */
export interface Rule {
  effect: RuleEffect;
  words: string[];
  exact?: boolean;
}

export type RuleEffect = "allow" | "deny" | "allow-unsandboxed";

/** A rule written badly (`--allow ""`, an unclosed quote): said in one line. */
export class RuleError extends Error {
  override name = "RuleError";
}

/**
 * The words of a rule as typed on the command line: split at spaces, with '…' and "…" quoting
 * and backslash escapes, and nothing else (no variables, no globs).
 */
export function ruleWords(text: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? "";
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === "\\" && quote === '"' && /["\\]/.test(text[i + 1] ?? ""))
        word = (word ?? "") + text[++i];
      else word = (word ?? "") + char;
    } else if (char === "'" || char === '"') {
      quote = char;
      word ??= "";
    } else if (char === "\\" && i + 1 < text.length) word = (word ?? "") + text[++i];
    else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? "") + char;
  }
  if (quote) throw new RuleError(`unclosed ${quote} in the rule ${JSON.stringify(text)}`);
  if (word !== undefined) words.push(word);
  if (words.length === 0)
    throw new RuleError('a rule is empty: name the command words it matches, e.g. "npm test"');
  return words;
}

/**
 * The broader rule "always" also offers for an exact one: the program and its first word that is
 * not an option (`npm test` for `npm test -- --watch`), matching every command that starts so.
 */
export function prefixRule(rule: Rule): Rule {
  const [program = "", ...rest] = rule.words;
  const word = rest.find((candidate) => !candidate.startsWith("-"));
  return { effect: rule.effect, words: word === undefined ? [program] : [program, word] };
}

/** `allow npm test`, `deny git push`, `allow rm -rf build (exactly)`: how a rule is shown. */
export function showRule(rule: Rule): string {
  const words = rule.words.map(shownWord).join(" ");
  return `${rule.effect} ${words}${rule.exact ? " (exactly)" : ""}`;
}

function shownWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

export function sameRule(a: Rule, b: Rule): boolean {
  return (
    a.effect === b.effect &&
    (a.exact ?? false) === (b.exact ?? false) &&
    a.words.length === b.words.length &&
    a.words.every((word, i) => word === b.words[i])
  );
}
