import type { InterruptedPolicy } from '../../tools/index.js';
import type { ToolIntent, ToolOutcomeEntry } from '../journal.js';

export type ToolStartDecision =
  /** The call finished before: reuse its outcome. */
  | { kind: 'reuse'; outcome: ToolOutcomeEntry }
  /** The call never started: record the intent and run it. */
  | { kind: 'run' }
  /** The call was interrupted; the tool is safe to run again with the same key. */
  | { kind: 'rerun'; intent: ToolIntent }
  /** The call was interrupted; the tool may have had an effect and must not run blindly again. */
  | { kind: 'outcome_unknown'; intent: ToolIntent };

/** The ledger rule: intent, then outcome; what a retried tool job does depends on which it finds. */
export function decideToolStart(
  intent: ToolIntent | undefined,
  outcome: ToolOutcomeEntry | undefined,
  policy: InterruptedPolicy,
  token: string,
): ToolStartDecision {
  if (outcome) return { kind: 'reuse', outcome };
  if (!intent) return { kind: 'run' };
  // The same attempt recorded the intent (its commit reply was lost): nothing was interrupted.
  if (intent.token === token) return { kind: 'rerun', intent };
  return policy === 'rerun' ? { kind: 'rerun', intent } : { kind: 'outcome_unknown', intent };
}

export function outcomeUnknownMessage(toolName: string): string {
  return (
    `the call of tool "${toolName}" was interrupted (the worker running it stopped) and its outcome is ` +
    'unknown: it may or may not have taken effect. Check its effect before calling it again.'
  );
}
