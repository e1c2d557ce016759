/**
 * Whether an event's payload contains `match` (wait_for_event's filter): every key of a `match` object is in
 * the payload with a value that contains the match's value (objects compared key by key, recursively; arrays
 * and scalars compared whole). An absent match takes every payload.
 */
export function payloadMatches(payload: unknown, match: unknown): boolean {
  if (match === undefined) return true;
  if (isPlainObject(match)) {
    if (!isPlainObject(payload)) return false;
    return Object.entries(match).every(
      ([key, value]) => Object.hasOwn(payload, key) && payloadMatches(payload[key], value),
    );
  }
  return sameJson(payload, match);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sameJson(left: unknown, right: unknown): boolean {
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, index) => sameJson(item, right[index]));
  }
  if (isPlainObject(left) || isPlainObject(right)) {
    if (!isPlainObject(left) || !isPlainObject(right)) return false;
    const keys = Object.keys(left);
    if (keys.length !== Object.keys(right).length) return false;
    return keys.every((key) => Object.hasOwn(right, key) && sameJson(left[key], right[key]));
  }
  return left === right;
}
