import type { Node } from "web-tree-sitter";
import { withSyntaxTree } from "./parser.js";

/**
 * One word of a command as the rules know it before the shell runs: `static` when its text is
 * fixed (quotes and escapes removed), `dynamic` when the shell decides it (a variable, a glob, a
 * brace expansion, a `~`, `$'…'`): it may become any text, several words or none.
 */
export type Word = { kind: "static"; value: string } | { kind: "dynamic"; text: string };

/** A simple command: its variable assignments (names), then its words, program first. */
export interface SimpleCommand {
  text: string;
  assigns: string[];
  words: Word[];
}

/**
 * What a command line holds, flattened: every simple command wherever it sits (in a pipeline,
 * a list, a subshell, a substitution), every path it writes to by a redirect, and what the rules
 * cannot see through, each said in words.
 */
export interface Script {
  commands: SimpleCommand[];
  writes: Word[];
  opaque: string[];
}

/** Syntax the rules cannot see through: whatever it runs, or changes, shows only when it runs. */
const opaqueSyntax: Record<string, string> = {
  command_substitution: "a command substitution $(…)",
  process_substitution: "a process substitution <(…)",
  arithmetic_expansion: "an arithmetic expansion $((…))",
  function_definition: "a function definition",
  for_statement: "a for loop (it sets a variable)",
  c_style_for_statement: "a for loop (it sets a variable)",
  case_statement: "a case statement",
  test_command: "a [[ … ]] test",
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

/** Syntax that only arranges simple commands or spells words: nothing hidden in it. */
const plainSyntax = new Set([
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
  "file_descriptor",
  "heredoc_start",
  "heredoc_body",
  "heredoc_content",
  "heredoc_end",
  "herestring_redirect",
  "heredoc_redirect",
  // the words of a `[ … ]` test (in `[[ … ]]` and arithmetic they are opaque anyway)
  "unary_expression",
  "binary_expression",
  "parenthesized_expression",
  "test_operator",
]);

/** Text that starts a substitution: inside a plain word, the grammar missed one. */
const misread = /`|\$\(|\$\[/;

/** A here-document with an unquoted delimiter expands its body, substitutions included. */
function expandingHeredoc(node: Node): boolean {
  const start = node.namedChildren.find((child) => child?.type === "heredoc_start")?.text ?? "";
  const body = node.namedChildren.find((child) => child?.type === "heredoc_body")?.text ?? "";
  return !/['"\\]/.test(start) && misread.test(body);
}

const writeOperators = new Set([">", ">>", "&>", "&>>", ">|", "<>"]);

/** Parses a command line; `undefined` when it is not valid shell syntax. */
export function parseScript(source: string): Promise<Script | undefined> {
  return withSyntaxTree(source, (root) => (root ? scriptOf(root) : undefined));
}

function scriptOf(root: Node): Script {
  const script: Script = { commands: [], writes: [], opaque: [] };
  const opaque = new Set<string>();
  const visit = (node: Node): void => {
    const type = node.type;
    if (type === "command") script.commands.push(simpleCommand(node));
    else if (type === "test_command" && !node.text.startsWith("[["))
      script.commands.push({ text: node.text, assigns: [], words: testWords(node) });
    else if (type === "variable_assignment" && node.parent?.type !== "command")
      script.commands.push({ text: node.text, assigns: [assignedName(node)], words: [] });
    else if (type === "file_redirect") {
      const target = redirectWrite(node);
      if (target) script.writes.push(target);
    } else if (type === "expansion") {
      if (!/^\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])\}$/.test(node.text))
        opaque.add("a parameter expansion with an operator");
    } else if (opaqueSyntax[type]) opaque.add(opaqueSyntax[type]);
    else if (type === "heredoc_redirect" && expandingHeredoc(node))
      opaque.add("a here-document that runs commands");
    else if (misread.test(node.text) && /^(word|string_content|heredoc_content)$/.test(type))
      opaque.add("a ` or $( the parser did not read as a substitution");
    else if (
      !plainSyntax.has(type) &&
      type !== "variable_assignment" &&
      type !== "variable_assignments"
    )
      opaque.add(`shell syntax the rules do not read (${type})`);
    for (const child of node.namedChildren) if (child) visit(child);
  };
  visit(root);
  script.opaque = [...opaque];
  return script;
}

function simpleCommand(node: Node): SimpleCommand {
  const command: SimpleCommand = { text: node.text, assigns: [], words: [] };
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.type === "variable_assignment") command.assigns.push(assignedName(child));
    else if (child.type === "command_name") {
      const name = child.namedChildren.length === 1 ? child.namedChildren[0] : undefined;
      command.words.push(name ? wordOf(name) : wordOf(child));
    } else if (!child.type.endsWith("_redirect")) command.words.push(wordOf(child));
  }
  return command;
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

/** The path a `file_redirect` writes to; none for a read or a descriptor copy (`2>&1`). */
function redirectWrite(node: Node): Word | undefined {
  const op = node.children.find((child) => child && !child.isNamed)?.type ?? "";
  const destination = node.childForFieldName("destination");
  if (!destination) return undefined;
  const target = wordOf(destination);
  if (writeOperators.has(op)) return target;
  if (op === ">&" && !(target.kind === "static" && /^(\d+|-)$/.test(target.value))) return target;
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
