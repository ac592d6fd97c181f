import * as crypto from "node:crypto";

/**
 * `node:crypto`, for `crypto.ts`. Here it is loaded with the module; the CLI's bundle replaces
 * this file with one that loads it at the first call (`lazyNodeCrypto` in `scripts/bundle.mjs`),
 * so a run that needs no digest of more than a few kilobytes and no random bytes never loads it.
 */
export function nodeCrypto(): typeof crypto {
  return crypto;
}
