/**
 * The end of an exhaustive `switch` over a union: the compiler proves it unreachable and names
 * every place a new kind must go; at run time a value no case knows throws.
 */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
