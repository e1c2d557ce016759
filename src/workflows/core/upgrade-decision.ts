import type { AgentDefinition } from '../agent-definition.js';
import { changedFields } from '../agent-definition.js';
import type { RunRecord } from '../run-record.js';

/**
 * An upgrade decided at an iteration boundary (decision 0030), committed with that iteration's reply, so it
 * happens once: a step that dies before its commit decided nothing.
 */
export interface UpgradeDecision {
  from: string;
  /**
   * The definition the run moves to; the same as `from` for a request with nothing to change (it only marks
   * the request answered); undefined when the run stays (see `reason`).
   */
  to: string | undefined;
  /** The fields of the definition that differ (top-level config keys, `providers`, `members` …). */
  changed: string[];
  /** Why the run stays on its definition (its name is gone from the worker's config); undefined when it moves. */
  reason: string | undefined;
}

/**
 * Whether this iteration moves the run to the definition its worker's config has under the run's name: when
 * the run's agent says `options.on_change: upgrade`, or POST /v1/runs/:id/upgrade asked after the run took
 * its definition. Undefined: the run keeps its definition without a word.
 */
export function decideUpgrade(input: {
  run: Pick<RunRecord, 'definition'>;
  /** The definition the run works under, as recorded. */
  recorded: AgentDefinition;
  /** The worker's current definition under the run's name; undefined when its config has no such name. */
  current: { hash: string; definition: AgentDefinition } | undefined;
  /** When an upgrade was last asked for (the journal's upgrade-request); null: never. */
  requestedAt: string | null;
}): UpgradeDecision | undefined {
  const pinned = input.run.definition;
  if (!pinned) return undefined;
  const requested = input.requestedAt !== null && input.requestedAt > pinned.recorded_at;
  if (!requested && onChangeOf(input.recorded) !== 'upgrade') return undefined;
  const { current } = input;
  if (!current) {
    // Said once: a kept run says it again only when asked again.
    if (pinned.kept !== undefined && !requested) return undefined;
    return {
      from: pinned.hash,
      to: undefined,
      changed: [],
      reason:
        `"${input.recorded.name}" is not in the config of the worker that took the step: the run stays on ` +
        'the definition it has',
    };
  }
  if (current.hash === pinned.hash) {
    return requested ? { from: pinned.hash, to: pinned.hash, changed: [], reason: undefined } : undefined;
  }
  return {
    from: pinned.hash,
    to: current.hash,
    changed: changedFields(input.recorded, current.definition),
    reason: undefined,
  };
}

/** The definition's `options.on_change` (an agent's; a group or team has none: pin). */
function onChangeOf(definition: AgentDefinition): 'pin' | 'upgrade' {
  const options = definition.entry.options;
  if (typeof options !== 'object' || options === null) return 'pin';
  return (options as { on_change?: unknown }).on_change === 'upgrade' ? 'upgrade' : 'pin';
}

/** The run's definition after the decision, as the reply's commit writes it. */
export function definitionAfter(
  pinned: NonNullable<RunRecord['definition']>,
  decision: UpgradeDecision,
  now: string,
  requestedAt: string | null,
): NonNullable<RunRecord['definition']> {
  // Later than the request, whatever the clocks of the API and the worker say: the request is answered.
  const at = requestedAt !== null && requestedAt >= now ? requestedAt : now;
  if (decision.to === undefined) return { ...pinned, recorded_at: at, kept: decision.reason ?? '' };
  return { hash: decision.to, recorded_at: at };
}
