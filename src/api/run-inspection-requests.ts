import type { Message } from '../chat/index.js';
import type { SystemState } from '../engine/index.js';
import { RatchetError } from '../errors/index.js';
import type { RunTimeline, RunTreeNode } from '../workflows/index.js';
import { toWireMessage } from './wire-views.js';

/**
 * What the inspection routes and MCP tools ask of the engine: reads of what runs recorded and of the
 * workers' registry and queues. Nothing here calls a model or a tool.
 */
export interface RunInspection {
  runTree(runId: string): Promise<{ runs: RunTreeNode[]; truncated: boolean } | undefined>;
  runSteps(
    runId: string,
    page: { from: number; limit: number; cutAt: number },
  ): Promise<RunTimeline | undefined>;
  systemState(): Promise<SystemState>;
  runChat(runId: string, from?: number): Promise<{ chatId: string; messages: Message[] } | undefined>;
}

function runNotFound(runId: string): never {
  throw new RatchetError('run_not_found', `unknown run ${runId}`);
}

/** The run and every run below it, depth first; run_not_found when there is no such run. */
export async function requireRunTree(engine: Pick<RunInspection, 'runTree'>, runId: string) {
  const found = await engine.runTree(runId);
  if (!found) return runNotFound(runId);
  return { run_id: runId, ...found };
}

/** A page of the run's timeline; run_not_found when there is no such run. */
export async function requireRunSteps(
  engine: Pick<RunInspection, 'runSteps'>,
  runId: string,
  page: { from: number; limit: number; cut_at: number },
): Promise<RunTimeline> {
  const timeline = await engine.runSteps(runId, { from: page.from, limit: page.limit, cutAt: page.cut_at });
  return timeline ?? runNotFound(runId);
}

/** The chat the run works on, after message `after` (all when undefined); run_not_found when there is no run. */
export async function requireRunMessages(
  engine: Pick<RunInspection, 'runChat'>,
  runId: string,
  after: number | undefined,
) {
  const from = after === undefined ? 0 : after + 1;
  const chat = await engine.runChat(runId, from);
  if (!chat) return runNotFound(runId);
  return {
    chat_id: chat.chatId,
    messages: chat.messages.map((message, offset) => toWireMessage(message, from + offset)),
  };
}
