import type { SessionHeader } from "../session/records.js";
import type { Block, Totals } from "./blocks.js";

/**
 * One output format: the text before the first block, one function per kind of block (the type
 * makes each renderer handle every kind), and the text after the last, with the totals. A
 * renderer is made per export.
 */
export interface Renderer {
  begin(header: SessionHeader): string;
  blocks: { [K in Block["kind"]]: (block: Extract<Block, { kind: K }>) => string };
  end(totals: Totals): string;
}

export function renderBlock(renderer: Renderer, block: Block): string {
  return (renderer.blocks[block.kind] as (block: Block) => string)(block);
}
