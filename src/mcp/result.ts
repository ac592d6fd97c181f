import { base64Bytes, byteSize, imagePartOf } from "../images.js";
import { headOf, wellFormed } from "../text.js";
import { limits, truncated } from "../tools/limits.js";
import type { ImagePart, ResultPart, ToolResult } from "../types.js";

/**
 * An MCP `tools/call` result as a receipt like any built-in tool's: text blocks joined; the
 * `structuredContent` as JSON text when there is no text; a resource link as one line; an
 * embedded text resource inline; an image every provider takes (`imagePartOf`) as an image part
 * with its placeholder line (`[image: image/png, 2x2, 1.2 KB]`) in the text; another image as a
 * line saying why it is not shown (`[image not shown: image/bmp, 1.2 KB: not a PNG, JPEG, GIF or
 * WebP image]`); audio and binary resources as one-line placeholders; `isError` carried
 * over. Then
 * the rules of every result: secrets redacted, lone surrogates replaced, at most
 * `limits.outputChars` characters, cut between code points, with the cut said.
 */

/** The parts of a content block this module reads; anything else is an unknown block. */
interface Block {
  type?: unknown;
  text?: unknown;
  data?: unknown;
  mimeType?: unknown;
  uri?: unknown;
  name?: unknown;
  resource?: { uri?: unknown; mimeType?: unknown; text?: unknown; blob?: unknown };
}

export interface RawCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

/** Characters read past the bound before redacting, so a secret cut at the bound is still found. */
const REDACTION_MARGIN = 64 * 1024;

export function receiptOf(result: RawCallResult, redact: (text: string) => string): ToolResult {
  const blocks = Array.isArray(result.content) ? (result.content as Block[]) : [];
  const pieces = blocks.map((block) => {
    if (block.type !== "image") return describeBlock(block);
    const image = imagePartOf(block.mimeType, block.data);
    return typeof image === "string"
      ? `[image not shown: ${mime(block.mimeType)}, ${size(block.data)}: ${image}]`
      : image;
  });
  const hasText = blocks.some((block) => block.type === "text");
  if (!hasText && result.structuredContent !== undefined) {
    pieces.push(JSON.stringify(result.structuredContent) ?? "");
  }
  const lines = pieces.map((piece) => (typeof piece === "string" ? piece : piece.placeholder));
  const joined = lines.length === 0 ? "[no content]" : lines.join("\n");
  const images = pieces.some((piece) => typeof piece !== "string");
  return {
    content: bounded(joined, redact),
    isError: result.isError === true,
    ...(images && { parts: partsOf(pieces, redact) }),
  };
}

/**
 * The result as parts: the text between images joined by lines, each run redacted and made
 * well-formed, all of it within `limits.outputChars` (the cut said), and the images whole.
 */
function partsOf(
  pieces: (string | { part: ImagePart })[],
  redact: (text: string) => string,
): ResultPart[] {
  const parts: ResultPart[] = [];
  let room: number = limits.outputChars;
  let run: string[] = [];
  const endRun = () => {
    if (run.length === 0) return;
    const text = bounded(run.join("\n"), redact);
    const head = headOf(text, room);
    const kept = head === text ? text : `${head}\n${truncated(text.length - head.length)}`;
    room = Math.max(0, room - kept.length);
    parts.push({ type: "text", text: kept });
    run = [];
  };
  for (const piece of pieces) {
    if (typeof piece === "string") run.push(piece);
    else {
      endRun();
      parts.push(piece.part);
    }
  }
  endRun();
  return parts;
}

/** `text` redacted, well-formed and cut to `limits.outputChars`, counting what was cut. */
export function bounded(text: string, redact: (text: string) => string): string {
  const head = wellFormed(redact(headOf(text, limits.outputChars + REDACTION_MARGIN)));
  const rest = text.length - Math.min(text.length, limits.outputChars + REDACTION_MARGIN);
  if (head.length <= limits.outputChars && rest === 0) return head;
  const kept = headOf(head, limits.outputChars);
  return `${kept}\n${truncated(head.length - kept.length + rest)}`;
}

function describeBlock(block: Block): string {
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? block.text : "";
    case "audio":
      return `[${block.type}: ${mime(block.mimeType)}, ${size(block.data)}]`;
    case "resource_link":
      return `[resource link: ${oneLine(block.name)} ${oneLine(block.uri)}${block.mimeType ? ` (${oneLine(block.mimeType)})` : ""}]`;
    case "resource": {
      const resource = block.resource ?? {};
      if (typeof resource.text === "string") {
        return `[resource: ${oneLine(resource.uri)}]\n${resource.text}`;
      }
      return `[resource: ${oneLine(resource.uri)}, ${mime(resource.mimeType)}, ${size(resource.blob)}]`;
    }
    default:
      return `[unsupported content: ${oneLine(block.type)}]`;
  }
}

const mime = (value: unknown) => (typeof value === "string" ? oneLine(value) : "unknown type");

/** A one-line, short rendering of a field a server chose. */
function oneLine(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? "");
  return headOf(text.replace(/[\r\n\t]+/g, " "), 200);
}

/** The decoded size of base64 `data`, as people read it: `512 B`, `1.2 KB`, `3.40 MB`. */
function size(data: unknown): string {
  if (typeof data !== "string") return "unknown size";
  return byteSize(base64Bytes(data));
}
