/**
 * `value` with `change` applied to every string in it, through arrays and plain objects (the
 * values, never the keys). Parts where nothing changed come back as the same objects, so a value
 * with nothing to change is returned as it came, and its shape never changes.
 */
export function mapStrings<T>(value: T, change: (text: string) => string): T {
  return mapValue(value, change) as T;
}

function mapValue(value: unknown, change: (text: string) => string): unknown {
  if (typeof value === "string") return change(value);
  if (Array.isArray(value)) {
    const mapped = value.map((item) => mapValue(item, change));
    return mapped.some((item, index) => item !== value[index]) ? mapped : value;
  }
  if (value === null || typeof value !== "object") return value;
  let changed = false;
  const entries = Object.entries(value).map(([key, item]) => {
    const mapped = mapValue(item, change);
    changed ||= mapped !== item;
    return [key, mapped] as const;
  });
  return changed ? Object.fromEntries(entries) : value;
}
