import { headOf, tailOf } from "../text.js";

/**
 * What a command wrote, stdout and stderr as they came: all of it is `head + tail` when `cut` is
 * 0; else the first and last halves of the bound, with `cut` characters dropped between them.
 */
export interface CommandOutput {
  head: string;
  cut: number;
  tail: string;
}

/**
 * Keeps the first and last halves of a stream of text, counting what fell in between. Cuts only
 * between code points (`headOf`, `tailOf`); the decoder never splits one across chunks. Holds at
 * most about `max` characters whatever the volume.
 */
export class BoundedOutput {
  private head = "";
  private headFull = false;
  private tail = "";
  private dropped = 0;

  constructor(private readonly max: number) {}

  push(text: string): void {
    const half = this.max / 2;
    if (!this.headFull) {
      const take = headOf(text, half - this.head.length);
      this.head += take;
      text = text.slice(take.length);
      // Once something is left over, the head is done, even a unit short of `half`.
      if (text !== "") this.headFull = true;
    }
    this.tail += text;
    if (this.tail.length > half * 2) this.trimTail();
  }

  kept(): CommandOutput {
    this.trimTail();
    return { head: this.head, cut: this.dropped, tail: this.tail };
  }

  private trimTail(): void {
    const kept = tailOf(this.tail, this.max / 2);
    this.dropped += this.tail.length - kept.length;
    this.tail = kept;
  }
}
