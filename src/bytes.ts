/**
 * Bytes written one after the other into memory that grows in place: address space is reserved
 * once (a resizable `ArrayBuffer`) and pages are used as the bytes reach them, so growing copies
 * nothing and leaves no old buffer behind, and `release` gives the pages back at once, not at V8's
 * next collection (V8 does not count this memory as its own, so it would not hurry to collect it).
 */
export class Bytes {
  private view: Buffer;
  private used = 0;

  private constructor(private readonly memory: ResizableBuffer) {
    this.view = Buffer.from(memory, 0, 0);
  }

  /** Memory for up to `max` bytes, or undefined where the system reserves none. */
  static reserve(this: void, max: number): Bytes | undefined {
    try {
      const memory = new ResizableBuffer(0, { maxByteLength: max });
      // A runtime without resizable buffers ignores the option and makes a fixed one.
      return memory.resizable === true ? new Bytes(memory) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The bytes written so far (a view: valid until the next write or `release`). */
  get bytes(): Buffer {
    return this.view.subarray(0, this.used);
  }

  write(text: string, encoding: "latin1" | "utf16le" | "utf8"): void {
    const most = encoding === "latin1" ? text.length : text.length * (encoding === "utf8" ? 3 : 2);
    this.room(most);
    this.used += this.view.write(text, this.used, encoding);
  }

  /** Takes `narrow`'s Latin-1 bytes as UTF-16LE units: each byte, then a zero byte. */
  widen(narrow: Bytes): void {
    const count = narrow.used;
    // Memory a resize adds is zeroed: only the low bytes are written.
    this.room(count * 2);
    const from = narrow.view;
    for (let i = 0; i < count; i++) this.view[2 * i] = from[i] as number;
    this.used = count * 2;
  }

  text(encoding: "latin1" | "utf16le"): string {
    return this.view.toString(encoding, 0, this.used);
  }

  release(): void {
    this.memory.resize(0);
    this.view = Buffer.from(this.memory, 0, 0);
    this.used = 0;
  }

  private room(size: number): void {
    const need = this.used + size;
    if (need <= this.view.length) return;
    if (need > this.memory.maxByteLength) throw new RangeError("more bytes than were reserved");
    this.memory.resize(Math.min(this.memory.maxByteLength, Math.ceil(need / STEP) * STEP));
    this.view = Buffer.from(this.memory, 0, this.memory.byteLength);
  }
}

/** Memory is taken this much at a time (the last step's unused part is never touched). */
const STEP = 1 << 20;

/** A resizable `ArrayBuffer` (ES2024, in Node since 20; the project's types stop at ES2023). */
interface ResizableBuffer extends ArrayBuffer {
  readonly resizable: boolean;
  readonly maxByteLength: number;
  resize(byteLength: number): void;
}
const ResizableBuffer = ArrayBuffer as unknown as new (
  byteLength: number,
  options: { maxByteLength: number },
) => ResizableBuffer;
