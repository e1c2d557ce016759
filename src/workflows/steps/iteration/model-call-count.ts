import type { StepContext } from '../runner/step-context.js';

/**
 * The model call an iteration's load counted before it was made (decision 0054). The load script adds one to
 * the iteration's counter (`calls:<n>`) when the reply is still to be made, so the call sends no command of
 * its own: the execution's first model call takes that count. An execution that ends without calling gives
 * it back (`returnUnusedCount`), so the counter keeps counting calls started, as it did when each call counted
 * itself; only an execution that dies between its load and its request leaves it one too high.
 */
export interface ModelCallCount {
  /** The iteration's counter (journal field `calls:<n>`). */
  readonly field: string;
  /** What the counter held before the load's count: the calls earlier executions started. */
  readonly before: number;
  /** No call of this execution has taken the load's count yet. */
  unused: boolean;
}

/** What a model call counts itself in: a counter field, or an iteration's count made by its load. */
export type ModelCallCounter = string | ModelCallCount;

/**
 * The count a call takes: the load's, when no call of this execution took it yet (then the counter after
 * this call is `before + 1`); undefined when the call must count itself in `field`.
 */
export function takeLoadCount(counter: ModelCallCounter): { field: string; calls?: number } {
  if (typeof counter === 'string') return { field: counter };
  if (!counter.unused) return { field: counter.field };
  counter.unused = false;
  return { field: counter.field, calls: counter.before + 1 };
}

/** Gives back the load's count of an execution that ended without taking it (it made no model call). */
export async function returnUnusedCount(
  context: StepContext,
  count: ModelCallCount | undefined,
): Promise<void> {
  if (!count?.unused) return;
  count.unused = false;
  await context.store
    .countInJournal(count.field, -1)
    .catch((error: unknown) => context.logger.warn({ err: error }, 'unused model call count not given back'));
}
