import { afterEach } from "vitest";

/** Closes everything a test opened (servers, mostly) after that test. Returns what it was given. */
export function useCleanup(): <T extends { close(): unknown }>(thing: T) => T {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((thing) => thing.close()));
  });
  return (thing) => {
    open.push(thing);
    return thing;
  };
}
