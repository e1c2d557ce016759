import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who is asking, for everything a request does below its route: the tenant of its scoped token, or none for an
 * operator token (and for an API without tokens). Kept in async-local storage entered by the bearer check,
 * so the tenant-scoped engine (tenant-scoped-engine.ts) reads it wherever a route or MCP tool calls the engine,
 * and a new route cannot forget it (decision 0035).
 */
export interface Caller {
  /** undefined: an operator, who sees every tenant. */
  tenant: string | undefined;
}

const callers = new AsyncLocalStorage<Caller>();

const operator: Caller = { tenant: undefined };

/** Runs `work` (and everything it starts) as `caller`. */
export function runAsCaller<T>(caller: Caller, work: () => T): T {
  return callers.run(caller, work);
}

/** The caller of the request being served; an operator outside any request (a process's own work). */
export function currentCaller(): Caller {
  return callers.getStore() ?? operator;
}
