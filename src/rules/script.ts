import type { Node } from "web-tree-sitter";
import { withSyntaxTree } from "./parser.js";

/**
 * One word of a command as the rules know it before the shell runs: `static` when its text is
 * fixed (quotes and escapes removed), `dynamic` when the shell decides it (a variable, a glob, a
 * brace expansion, a `~`, `$'…'`): it may become any text, several words or none.
 */
export type Word = { kind: "static"; value: string } | { kind: "dynamic"; text: string };

/**
 * A path `find -exec … {} ;` puts where its `{}` stands: known only at run time, but never an
 * option (it starts with a start point, and find takes a word that starts with `-` as part of
 * its expression), so the read-only set counts it as an operand. One word with `;`, several
 * with `+`; always the same object.
 */
export const foundPath: Word = { kind: "dynamic", text: "{}" };

/** A simple command: its variable assignments (names), then its words, program first. */
export interface SimpleCommand {
  text: string;
  assigns: string[];
  words: Word[];
}

/**
 * What a command line holds, flattened: every simple command wherever it sits (in a pipeline,
 * a list, a subshell, a substitution), every path it writes to and reads from by a redirect, and
 * what the rules cannot see through, each said in words.
 */
export interface Script {
  commands: SimpleCommand[];
  writes: Word[];
  reads: Word[];
  opaque: string[];
  /**
   * Each `$(…)` in it, said in words: its commands are among `commands` and its output is a
   * word known only at run time, so the rules may allow it; but a deny rule cannot see what a
   * command given that output runs, so it counts as hidden where deny rules decide.
   */
  substitutions?: string[];
  /** A `while` or `until` loop is in it: a command there may run again, from where it left. */
  loops?: boolean;
}

/**
 * The shell syntax the rules model, by the grammar's node types: what only arranges simple
 * commands (lists, pipelines, subshells, groups, `if`, `while`/`until`, `!`) or spells words
 * (quotes, `$name`, `${name}`, escapes), redirects, assignments and the words of a `[ … ]` test.
 * Every other node type (an arithmetic command `((…))`, a substitution, a loop that sets a
 * variable, anything a later grammar adds) is syntax the rules do not model: the line asks.
 */
export const modelledTypes: ReadonlySet<string> = new Set([
  "program",
  "list",
  "pipeline",
  "subshell",
  "compound_statement",
  "negated_command",
  "redirected_statement",
  "do_group",
  "if_statement",
  "elif_clause",
  "else_clause",
  "while_statement",
  "comment",
  "command",
  "command_name",
  "word",
  "string",
  "string_content",
  "raw_string",
  "ansi_c_string",
  "concatenation",
  "number",
  "variable_name",
  "special_variable_name",
  "simple_expansion",
  "expansion",
  "variable_assignment",
  "variable_assignments",
  "file_redirect",
  "file_descriptor",
  "heredoc_redirect",
  "heredoc_start",
  "heredoc_body",
  "heredoc_content",
  "heredoc_end",
  "herestring_redirect",
  "test_command",
  "unary_expression",
  "binary_expression",
  "parenthesized_expression",
  "test_operator",
]);

/** The grammar's unnamed tokens the rules model; `((`, `[[`, `$((`, `$(`, `for`, `case`… are not. */
export const modelledTokens: ReadonlySet<string> = new Set([
  ...[";", "&", "&&", "||", "|", "|&", "!", "(", ")", "{", "}", "[", "]"],
  ...["if", "then", "elif", "else", "fi", "while", "until", "do", "done"],
  ...['"', "$", "${", "=", "+="],
  ...[">", ">>", "<", "&>", "&>>", "<&", ">&", ">|", "<&-", ">&-", "<<", "<<-", "<<<"],
  // the operators of a `[ … ]` test
  ...["==", "!=", "-a", "-o"],
]);

const arithmeticCommand = "an arithmetic command ((…)), which evaluates variables as code";

/** Why a node type outside the model asks, for the ones a person is likely to meet. */
const unmodelledReasons: Record<string, string> = {
  command_substitution: "a command substitution $(…)",
  process_substitution: "a process substitution <(…)",
  arithmetic_expansion: "an arithmetic expansion $((…))",
  "((": arithmeticCommand,
  "$[": "an arithmetic expansion $[…]",
  function_definition: "a function definition",
  for_statement: "a for loop (it sets a variable)",
  c_style_for_statement: "a for loop (it sets a variable)",
  case_statement: "a case statement",
  "[[": "a [[ … ]] test",
  ternary_expression: "an arithmetic expression",
  postfix_expression: "an arithmetic expression",
  declaration_command: "export, declare, local or readonly (they set variables)",
  unset_command: "unset (it changes variables)",
  subscript: "an array subscript",
  array: "an array",
  brace_expression: "a brace expansion",
  extglob_pattern: "an extended glob",
  regex: "a regular expression match",
  translated_string: 'a $"…" string',
};

/** Why a node is outside the model, or `undefined` when the rules model it. */
export function unmodelled(type: string, named: boolean): string | undefined {
  if (named ? modelledTypes.has(type) : modelledTokens.has(type)) return undefined;
  return unmodelledReasons[type] ?? `shell syntax the rules do not model (${type})`;
}

/** Text that starts a substitution: inside a plain word, the grammar missed one. */
const misread = /`|\$\(|\$\[/;

/**
 * A here-document with an unquoted delimiter expands its body: anything there but text, `$name`
 * and `${name}` (a subscript `${a[i]}` evaluates code, a `$(…)` runs it) asks.
 */
function expandingHeredoc(node: Node): boolean {
  const start = node.namedChildren.find((child) => child?.type === "heredoc_start")?.text ?? "";
  const body = node.namedChildren.find((child) => child?.type === "heredoc_body")?.text ?? "";
  const plain = body.replace(
    /\\[\s\S]|\$(\{([A-Za-z_]\w*|[0-9@*#?$!-])\}|[A-Za-z_0-9@*#?$!-])/g,
    "",
  );
  return !/['"\\]/.test(start) && /[`$]/.test(plain);
}

const writeOperators = new Set([">", ">>", "&>", "&>>", ">|", "<>"]);

/** Parses a command line; `undefined` when it is not valid shell syntax. */
export function parseScript(source: string): Promise<Script | undefined> {
  return withSyntaxTree(source, (root) => (root ? readTree(root) : undefined));
}

/** `$(…)` is modelled (its commands are read like any other); backticks are not. */
const substitution = /^\$\([\s\S]*\)$/;

/** What a syntax tree holds: its commands, its redirect targets, what the rules do not model. */
export function readTree(root: Node): Script {
  const script: Script = { commands: [], writes: [], reads: [], opaque: [] };
  const opaque = new Set<string>();
  const substitutions = new Set<string>();
  const visit = (node: Node): void => {
    const type = node.type;
    const modelled =
      (type === "command_substitution" && substitution.test(node.text)) ||
      (type === "$(" &&
        node.parent?.type === "command_substitution" &&
        substitution.test(node.parent.text));
    const outside = modelled ? undefined : unmodelled(type, node.isNamed);
    if (type === "while_statement") script.loops = true;
    if (modelled && node.isNamed) substitutions.add(`a command substitution ${node.text}`);
    if (outside) opaque.add(outside);
    // bash reads `((` as an arithmetic command where the grammar may see two subshells
    else if (type === "subshell" && node.text.startsWith("((")) opaque.add(arithmeticCommand);
    else if (type === "command") script.commands.push(simpleCommand(node));
    else if (type === "test_command" && node.children[0]?.type === "[")
      script.commands.push({ text: node.text, assigns: [], words: testWords(node) });
    else if (type === "variable_assignment" && node.parent?.type !== "command")
      script.commands.push({ text: node.text, assigns: [assignedName(node)], words: [] });
    else if (type.endsWith("_redirect")) {
      const problem = redirectProblem(node) ?? streamProblem(node);
      if (problem) opaque.add(problem);
      if (type === "file_redirect") {
        const target = redirectTarget(node);
        if (target?.io === "write") script.writes.push(target.word);
        if (target?.io === "read") script.reads.push(target.word);
      }
    } else if (type === "expansion") {
      if (!/^\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])\}$/.test(node.text))
        opaque.add("a parameter expansion with an operator");
    }
    if (type === "heredoc_redirect" && expandingHeredoc(node))
      opaque.add("a here-document whose body expands more than $name");
    if (misread.test(node.text) && /^(word|string_content|heredoc_content)$/.test(type))
      opaque.add("a ` or $( the parser did not read as a substitution");
    for (const child of node.children) if (child) visit(child);
  };
  visit(root);
  script.opaque = [...opaque];
  if (substitutions.size > 0) script.substitutions = [...substitutions];
  return script;
}

/**
 * A redirect bash reads otherwise than the grammar: `{name}>` and `{a[i]}>` (a descriptor kept
 * in a variable, whose subscript bash evaluates as code), and words after a redirect's target
 * (`ls > out -la`), which are the command's arguments though the grammar files them under the
 * redirect.
 */
function redirectProblem(node: Node): string | undefined {
  const previous = node.previousSibling;
  if (previous && previous.type !== "compound_statement" && previous.endIndex === node.startIndex)
    if (previous.text.endsWith("}"))
      return "a redirect to a descriptor named by a variable ({name}>)";
  const words = node.namedChildren.filter((child) => child && child.type !== "file_descriptor");
  if (node.type === "file_redirect" && words.length > 1)
    return "words after a redirect's target (the parser does not give them to the command)";
  return undefined;
}

function simpleCommand(node: Node): SimpleCommand {
  const command: SimpleCommand = { text: node.text, assigns: [], words: [] };
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === "variable_assignment") command.assigns.push(assignedName(child));
    else if (child.type === "command_name") {
      const name = child.namedChildren.length === 1 ? child.namedChildren[0] : undefined;
      command.words.push(name ? wordOf(name) : wordOf(child));
    } else if (!child.type.endsWith("_redirect") && !gluedDescriptor(child, node))
      command.words.push(wordOf(child));
  }
  return command;
}

/**
 * A number written against the redirect after it (`cat 0< f`) is that redirect's descriptor to
 * bash, though the grammar gives `0` to the command as a word.
 */
function gluedDescriptor(child: Node, command: Node): boolean {
  if (child.type !== "number" || !/^\d+$/.test(child.text)) return false;
  const next =
    child.nextSibling ?? (child.endIndex === command.endIndex ? command.nextSibling : null);
  return next?.type.endsWith("_redirect") === true && next.startIndex === child.endIndex;
}

/** The words of a `[ … ]` test, `[` first: its operators and operands, in order. */
function testWords(node: Node): Word[] {
  const words: Word[] = [{ kind: "static", value: "[" }];
  const collect = (part: Node): void => {
    if (/^(unary|binary|parenthesized)_expression$/.test(part.type)) {
      for (const child of part.children) if (child) collect(child);
    } else if (part.type === "test_operator" || !part.isNamed)
      words.push({ kind: "static", value: part.text });
    else words.push(wordOf(part));
  };
  for (const child of node.namedChildren) if (child) collect(child);
  return words;
}

function assignedName(node: Node): string {
  return node.childForFieldName("name")?.text ?? node.text;
}

/** The standard descriptors a redirect may copy: the ones the shell was started with. */
const standardDescriptors = /^[012]$/;

/** A redirect's operator: `<`, `>`, `<&`, `>&`, `<<<`, `<>`… */
function operatorOf(node: Node): string {
  return node.children.find((child) => child && !child.isNamed)?.type ?? "";
}

/**
 * The part of a redirect the rules do not model as a plain stream: a descriptor copied from or
 * moved from anything but 0, 1 and 2 (`<&3`, `>&9`, `<&3-`, `<&FILE`), a file opened for reading
 * and writing (`<>`), and a here-string whose word expands (`<<< "$HOME"`).
 */
function streamProblem(node: Node): string | undefined {
  if (node.type === "herestring_redirect") {
    const word = node.namedChildren.find((child) => child && child.type !== "file_descriptor");
    if (!word || wordOf(word).kind !== "static") return "a here-string that expands (<<< …)";
    return undefined;
  }
  if (node.type !== "file_redirect") return undefined;
  const op = operatorOf(node);
  if (op === "<>") return "a redirect that opens a file to read and write (<>)";
  const destination = node.childForFieldName("destination");
  if (op === "<&" && destination) {
    const source = wordOf(destination);
    if (source.kind !== "static" || !standardDescriptors.test(source.value))
      return `an input copied from ${destination.text} (only 0, 1 and 2 are copied)`;
  }
  if (op === ">&" && destination) {
    const source = wordOf(destination);
    if (
      source.kind === "static" &&
      /^\d+-?$/.test(source.value) &&
      !standardDescriptors.test(source.value)
    )
      return `an output copied to descriptor ${source.value} (only 0, 1 and 2 are copied)`;
  }
  return undefined;
}

/**
 * The path a `file_redirect` writes to (`>`, `>>`, `&>`, `>|`, `<>`, `>&FILE`) or reads from
 * (`<`, `N<`); none for a copy of a descriptor (`2>&1`, `<&0`) or a close (`<&-`).
 */
function redirectTarget(node: Node): { io: "read" | "write"; word: Word } | undefined {
  const op = operatorOf(node);
  const destination = node.childForFieldName("destination");
  if (!destination) return undefined;
  const word = wordOf(destination);
  if (op === "<") return { io: "read", word };
  if (writeOperators.has(op)) return { io: "write", word };
  if (op === ">&" && !(word.kind === "static" && /^(\d+-?|-)$/.test(word.value)))
    return { io: "write", word };
  return undefined;
}

/** `{a,b}` and `{1..3}` outside quotes: brace expansion makes several words of one. */
const braces = /\{[^{}]*(,|\.\.)[^{}]*\}/;

export function wordOf(node: Node): Word {
  const expands = (node.type === "word" || node.type === "concatenation") && braces.test(node.text);
  const value = expands ? undefined : literal(node);
  return value === undefined ? { kind: "dynamic", text: node.text } : { kind: "static", value };
}

function literal(node: Node): string | undefined {
  switch (node.type) {
    case "word":
    case "number":
      return unquoted(node.text);
    case "raw_string":
      return node.text.slice(1, -1);
    case "string": {
      const parts = node.namedChildren;
      if (parts.some((part) => part?.type !== "string_content")) return undefined;
      return doubleQuoted(node.text.slice(1, -1));
    }
    case "concatenation": {
      let value = "";
      for (const part of node.namedChildren) {
        // a lone `[` is a word of its own; inside a longer word it is a glob
        if (part?.type === "word" && /[[\]]/.test(part.text)) return undefined;
        const piece = part && literal(part);
        if (piece === undefined) return undefined;
        value += piece;
      }
      return value;
    }
    default:
      return undefined;
  }
}

/**
 * The value of unquoted text: a backslash keeps the next character, a backslash-newline
 * vanishes. A glob character or a leading `~` makes the word dynamic.
 */
function unquoted(text: string): string | undefined {
  if (text === "[" || text === "]") return text;
  let value = "";
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? "";
    if (char === "\\") {
      const next = text[++i];
      if (next !== undefined && next !== "\n") value += next;
    } else if ("*?[]".includes(char) || (char === "~" && i === 0)) return undefined;
    else value += char;
  }
  return value;
}

/** The value of the inside of "…" with only plain text: `\` escapes only $ ` " \ and newline. */
function doubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, char: string) => (char === "\n" ? "" : char));
}
