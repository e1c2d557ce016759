import { RatchetError } from '../errors/index.js';
import { maxRunTimeoutS, secondsLimit } from '../schemas/index.js';
import { type Budget, runDeadline } from '../workflows/index.js';
import type { EngineOptions, StartRunInput } from './engine-options.js';

/** The metadata bound of an engine built without one (config `api.max_metadata_bytes` has the same default). */
const defaultMaxMetadataBytes = 16_384;

/**
 * The engine's rules for what a client may ask of a run (start, retry, fork), from the agents' config: an
 * agent that exists, limits within the agent's, metadata within its bound. Each refusal names the field and
 * its limit, so a client (the API's `details.issues`) can point at what to change.
 */
export function assertAgent(options: EngineOptions, agent: string): void {
  if (!options.agents.includes(agent)) {
    throw new RatchetError(
      'agent_not_found',
      `unknown agent "${agent}" (known: ${options.agents.join(', ')})`,
    );
  }
}

export function isTeam(options: EngineOptions, agent: string): boolean {
  return options.teams?.includes(agent) ?? false;
}

/**
 * The budget a new run keeps: what it asked for; for a team, the team's `budget` filled in under it (its
 * members' runs share their root's budget, so the team's budget bounds them all). An agent's own budget is
 * not copied: its iterations check it beside the run's.
 */
export function runBudgetOf(
  options: EngineOptions,
  agent: string,
  asked: Budget | undefined,
): { budget?: Budget } {
  const team = isTeam(options, agent) ? options.budgets?.[agent] : undefined;
  const budget = team ? { ...team, ...asked } : asked;
  return budget ? { budget } : {};
}

/** The display prefix of an agent's messages in clients. */
export function prefixOf(options: EngineOptions, agent: string): string {
  return options.prefixes?.[agent] ?? '🤖';
}

/**
 * A session's metadata is kept as long as the session (the retention window), so what one client may store
 * is bounded: `api.max_metadata_bytes` of JSON, checked before anything is written. Given with an existing
 * session (where it is ignored), it is checked all the same: one rule whatever the request.
 */
export function checkMetadata(options: EngineOptions, metadata: Record<string, unknown> | undefined): void {
  if (metadata === undefined) return;
  const limit = options.maxMetadataBytes ?? defaultMaxMetadataBytes;
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes <= limit) return;
  throw new RatchetError(
    'invalid_run_settings',
    `metadata: ${bytes} bytes as JSON, more than api.max_metadata_bytes (${limit}) allows; store less, ` +
      'or raise api.max_metadata_bytes',
    { details: { field: 'metadata', limit } },
  );
}

/** When a new run of the agent must be finished: its own timeout, or a shorter one asked for the run. */
export function deadlineOf(
  options: EngineOptions,
  now: Date,
  agent: string,
  timeoutS: number | undefined,
): string | undefined {
  const limit = options.timeouts?.[agent];
  // The API and the config refuse it first; a caller of the engine itself must not store a date past
  // what the run record's schema takes either.
  if (timeoutS !== undefined && !(Number.isInteger(timeoutS) && timeoutS > 0 && timeoutS <= maxRunTimeoutS)) {
    throw new RatchetError(
      'invalid_run_settings',
      `timeout_s: ${timeoutS} must be a whole number of seconds from 1 to ${secondsLimit(maxRunTimeoutS)}`,
      { details: { field: 'timeout_s', limit: maxRunTimeoutS } },
    );
  }
  if (timeoutS !== undefined && limit !== undefined && timeoutS > limit) {
    throw new RatchetError(
      'invalid_run_settings',
      `timeout_s: ${timeoutS} is more than agent "${agent}" allows (options.timeout_s: ${limit}); ask for ${limit} or less`,
      { details: { field: 'timeout_s', limit } },
    );
  }
  return runDeadline(now, timeoutS ?? limit);
}

/** A run may ask for less than its agent's config allows, never more. */
export function checkRunLimits(
  options: EngineOptions,
  agent: string,
  input: Pick<StartRunInput, 'maxIterations' | 'budget'>,
): void {
  // `field` and `limit` let a client (the API's `details.issues`) point at what to change.
  const refuse = (field: string, limit: number | null, message: string) => {
    throw new RatchetError('invalid_run_settings', message, { details: { field, limit } });
  };
  if (input.maxIterations !== undefined) {
    const limit = options.maxIterations?.[agent];
    if (limit === undefined)
      refuse(
        'max_iterations',
        null,
        `max_iterations: "${agent}" is a team or handoff group; only an agent's runs take max_iterations`,
      );
    else if (input.maxIterations > limit)
      refuse(
        'max_iterations',
        limit,
        `max_iterations: ${input.maxIterations} is more than agent "${agent}" allows (options.max_iterations: ${limit}); ask for ${limit} or less`,
      );
  }
  const agentBudget = options.budgets?.[agent];
  if (input.budget && agentBudget) {
    for (const field of ['tokens', 'cost_usd'] as const) {
      const asked = input.budget[field];
      const allowed = agentBudget[field];
      if (asked !== undefined && allowed !== undefined && asked > allowed)
        refuse(
          `budget.${field}`,
          allowed,
          `budget.${field}: ${asked} is more than ${isTeam(options, agent) ? 'team' : 'agent'} "${agent}" allows (budget.${field}: ${allowed}); ask for ${allowed} or less`,
        );
    }
  }
}
