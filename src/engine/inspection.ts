import { definitionsInUse } from '../redis/definition-usage.js';
import {
  readQueueCounts,
  readRunSteps,
  readRunTree,
  type ShardQueue,
  type StepsPage,
} from '../redis/run-inspection.js';
import { type RegisteredWorker, readWorkers } from '../redis/worker-registry.js';
import {
  type RunCounts,
  type RunTimeline,
  type RunTreeNode,
  sessionIdOfRun,
  type UsageTotals,
  usageTotalsOf,
} from '../workflows/index.js';
import type { EngineParts } from './engine-parts.js';

/** What the client face shows of the system: run trees, step timelines, usage, workers and queues. */

export interface SystemState {
  workers: RegisteredWorker[];
  queues: ShardQueue[];
  /** Runs by status, from the run index (waiting_input: with a pending question). */
  runs_by_status: RunCounts;
}

/** The run and every run below it (GET /v1/runs/:id/tree); undefined when the run does not exist. */
export async function runTree(
  parts: EngineParts,
  runId: string,
): Promise<{ runs: RunTreeNode[]; truncated: boolean } | undefined> {
  const sessionId = sessionIdOfRun(runId);
  if (!sessionId) return undefined;
  const pending = await parts.store.pendingQuestions(sessionId);
  const byRun = new Map<string, number>();
  for (const question of pending) byRun.set(question.run_id, (byRun.get(question.run_id) ?? 0) + 1);
  return readRunTree(parts.redis, parts.space, sessionId, runId, {
    pendingOf: (id) => byRun.get(id) ?? 0,
    nowMs: parts.now().getTime(),
  });
}

/** A page of the run's timeline from its journal (GET /v1/runs/:id/steps); undefined when it does not exist. */
export async function runSteps(
  parts: EngineParts,
  runId: string,
  page: StepsPage,
): Promise<RunTimeline | undefined> {
  const sessionId = sessionIdOfRun(runId);
  if (!sessionId) return undefined;
  return readRunSteps(parts.redis, parts.space, sessionId, runId, page);
}

/** An agent's usage summed over all its runs (every shard). */
export async function agentUsage(parts: EngineParts, agent: string): Promise<UsageTotals> {
  const totals = (await parts.store.agentUsageByShard(agent)).map(usageTotalsOf);
  return {
    input_tokens: totals.reduce((sum, usage) => sum + usage.input_tokens, 0),
    output_tokens: totals.reduce((sum, usage) => sum + usage.output_tokens, 0),
    cached_input_tokens: totals.reduce((sum, usage) => sum + usage.cached_input_tokens, 0),
    requests: totals.reduce((sum, usage) => sum + usage.requests, 0),
    cost_usd: totals.reduce((sum, usage) => sum + usage.cost_usd, 0),
  };
}

/** Live workers, the step queues per shard, runs by status (GET /v1/system). */
export async function systemState(parts: EngineParts): Promise<SystemState> {
  const [workers, queues, runs] = await Promise.all([
    readWorkers(parts.redis, parts.space),
    readQueueCounts(parts.redis, parts.space, parts.queues.queues),
    parts.store.countRuns(),
  ]);
  return { workers, queues, runs_by_status: runs };
}

/** The most unfinished runs GET /v1/agents/:name reads to count the definitions they work under. */
export const definitionUsageLimit = 10_000;

/** An agent's definitions (decision 0030): its current one here, and those its unfinished runs work under. */
export interface AgentDefinitions {
  /** The hash of its definition in this process's config; null when the config has no such name. */
  current: string | null;
  /** Most used first; `hash` null: runs recorded before definitions were (they use their worker's config). */
  in_use: { hash: string | null; runs: number; current: boolean }[];
  /** More than `definitionUsageLimit` unfinished runs: the counts stop there. */
  truncated: boolean;
}

export async function agentDefinitions(parts: EngineParts, agent: string): Promise<AgentDefinitions> {
  const current = parts.options.definitions?.get(agent)?.hash ?? null;
  const { definitions, truncated } = await definitionsInUse(
    parts.redis,
    parts.space,
    agent,
    definitionUsageLimit,
  );
  return {
    current,
    in_use: definitions.map((use) => ({ ...use, current: use.hash !== null && use.hash === current })),
    truncated,
  };
}
