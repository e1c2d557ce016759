/** A page of the console and what its hash names: `#/runs?status=failed`, `#/runs/<id>`, `#/inbox` … */
export interface Route {
  page: 'runs' | 'run' | 'inbox' | 'session' | 'system' | 'schedules' | 'webhooks' | 'not_found';
  /** The id in the path (`id`) and every query parameter. */
  params: Record<string, string>;
}

/** Reads a location hash (`#/runs/run_1?x=y`) as a route; an empty hash is the runs page. */
export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#/, '');
  const queryAt = text.indexOf('?');
  const path = queryAt === -1 ? text : text.slice(0, queryAt);
  const params: Record<string, string> = {};
  if (queryAt !== -1) {
    for (const [name, value] of new URLSearchParams(text.slice(queryAt + 1))) params[name] = value;
  }
  const segments = path
    .split('/')
    .filter((segment) => segment !== '')
    .map(decodeSegment);
  const [first, second, ...rest] = segments;
  if (rest.length > 0 || segments.includes(undefined)) return { page: 'not_found', params };
  if (first === undefined || (first === 'runs' && second === undefined)) return { page: 'runs', params };
  if (first === 'runs' && second !== undefined) return { page: 'run', params: { ...params, id: second } };
  if (first === 'sessions' && second !== undefined)
    return { page: 'session', params: { ...params, id: second } };
  if (first === 'inbox' && second === undefined) return { page: 'inbox', params };
  if (first === 'system' && second === undefined) return { page: 'system', params };
  if (first === 'webhooks' && second === undefined) return { page: 'webhooks', params };
  if (first === 'schedules' && second === undefined) return { page: 'schedules', params };
  return { page: 'not_found', params };
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The hash of a page: `href(['runs', id])`, `href(['runs'], {status: 'failed'})`. Empty values are left out. */
export function href(path: readonly string[], query: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') search.set(name, value);
  }
  const text = search.toString();
  return `#/${path.map(encodeURIComponent).join('/')}${text === '' ? '' : `?${text}`}`;
}

export function runHref(runId: string): string {
  return href(['runs', runId]);
}

export function sessionHref(sessionId: string): string {
  return href(['sessions', sessionId]);
}
