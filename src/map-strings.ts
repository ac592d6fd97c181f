export interface MapStringsOptions {
  /** Also change the keys of objects (two keys that become one keep the later value). */
  keys?: boolean;
}

/** An array or object being mapped: its entries, and the mapped values of those done so far. */
interface Frame {
  value: object;
  entries: [string, unknown][];
  mapped: unknown[];
}

/**
 * `value` with `change` applied to every string in it, through arrays and plain objects (the
 * values; the keys only when asked). Parts where nothing changed come back as the same objects,
 * so a value with nothing to change is returned as it came, and its shape never changes. The
 * walk keeps its own stack: a value nested 100,000 levels deep is mapped like a flat one.
 */
export function mapStrings<T>(
  value: T,
  change: (text: string) => string,
  options: MapStringsOptions = {},
): T {
  if (!isContainer(value)) return (typeof value === "string" ? change(value) : value) as T;
  // Most values have nothing to change: a look without copying tells, and only a change is mapped.
  if (unchanged(value, change, options.keys === true)) return value;
  const stack: Frame[] = [open(value)];
  for (;;) {
    const frame = stack[stack.length - 1] as Frame;
    const next = frame.entries[frame.mapped.length];
    if (next !== undefined) {
      const [, item] = next;
      if (isContainer(item)) stack.push(open(item));
      else frame.mapped.push(typeof item === "string" ? change(item) : item);
      continue;
    }
    stack.pop();
    const done = close(frame, change, options.keys === true);
    const parent = stack[stack.length - 1];
    if (parent === undefined) return done as T;
    parent.mapped.push(done);
  }
}

/**
 * Whether `change` leaves every string in `value` (and every key, with `keys`) as it is: the
 * walk of `mapStrings` without its copies, stopping at the first string that would change.
 */
function unchanged(value: object, change: (text: string) => string, keys: boolean): boolean {
  const stack: object[] = [value];
  const same = (item: unknown) => {
    if (typeof item === "string") return change(item) === item;
    if (isContainer(item)) stack.push(item);
    return true;
  };
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (Array.isArray(next)) {
      for (const item of next) if (!same(item)) return false;
      continue;
    }
    const record = next as Record<string, unknown>;
    for (const key of Object.keys(record))
      if ((keys && change(key) !== key) || !same(record[key])) return false;
  }
  return true;
}

function isContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

function open(value: object): Frame {
  return { value, entries: Object.entries(value), mapped: [] };
}

/** The frame's value rebuilt from its mapped entries, or the same value if none changed. */
function close(frame: Frame, change: (text: string) => string, keys: boolean): unknown {
  const { value, entries, mapped } = frame;
  if (Array.isArray(value)) {
    return mapped.some((item, index) => item !== entries[index]?.[1]) ? mapped : value;
  }
  const newKeys = entries.map(([key]) => (keys ? change(key) : key));
  const changed = entries.some(
    ([key, item], index) => newKeys[index] !== key || mapped[index] !== item,
  );
  return changed ? Object.fromEntries(newKeys.map((key, index) => [key, mapped[index]])) : value;
}
