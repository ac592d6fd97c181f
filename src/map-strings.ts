export interface MapStringsOptions {
  /** Also change the keys of objects (two keys that become one keep the later value). */
  keys?: boolean;
}

/**
 * `value` with `change` applied to every string in it, through arrays and plain objects (the
 * values; the keys only when asked). Parts where nothing changed come back as the same objects,
 * so a value with nothing to change is returned as it came, and its shape never changes.
 */
export function mapStrings<T>(
  value: T,
  change: (text: string) => string,
  options: MapStringsOptions = {},
): T {
  return mapValue(value, change, options.keys === true) as T;
}

function mapValue(value: unknown, change: (text: string) => string, keys: boolean): unknown {
  if (typeof value === "string") return change(value);
  if (Array.isArray(value)) {
    const mapped = value.map((item) => mapValue(item, change, keys));
    return mapped.some((item, index) => item !== value[index]) ? mapped : value;
  }
  if (value === null || typeof value !== "object") return value;
  let changed = false;
  const entries = Object.entries(value).map(([key, item]) => {
    const mappedKey = keys ? change(key) : key;
    const mapped = mapValue(item, change, keys);
    changed ||= mapped !== item || mappedKey !== key;
    return [mappedKey, mapped] as const;
  });
  return changed ? Object.fromEntries(entries) : value;
}
