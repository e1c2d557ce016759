/** A value of a query parameter as the client's methods take it. */
export type QueryValue = string | number | boolean | Date | readonly string[] | undefined;

/**
 * `?name=value&…` for the parameters given (undefined ones left out), or '' for none: a list is sent as one
 * comma-separated value (the run list's `status`), a Date as its ISO 8601 time, a boolean as true/false. The
 * server validates each and names the parameter it refuses.
 */
export function queryString(parameters: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) {
    if (value === undefined) continue;
    if (value instanceof Date) search.set(name, value.toISOString());
    else if (typeof value === 'object') search.set(name, value.join(','));
    else search.set(name, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
