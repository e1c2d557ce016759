import type { Message } from '../chat/index.js';
import type { Engine } from '../engine/index.js';
import type { RatchetEvent } from '../events/event.js';
import type { RedisClient } from '../redis/connection.js';
import { runKeys } from '../redis/keys.js';
import type { RunView } from '../workflows/index.js';

/**
 * A run and every run below it (delegations, team members), as data two executions of one scenario can be
 * compared on. Run ids differ between executions (a root's id is random and its children's derive from it),
 * so runs are named by their place in the tree (`root`, `root/alpha`, `root/alpha#2` for a second turn) and
 * every id in the data is replaced by that name.
 */
export interface RunTreeSnapshot {
  status: string;
  result: string | null;
  /** Per run, by its name in the tree: its status, its chat and its events (sorted: a multiset). */
  runs: Record<string, { status: string; chat: unknown[]; events: string[] }>;
  /** Runs of the session: exactly the runs of the tree, one per delegation and turn. */
  runCount: number;
}

export interface RunTreeRead {
  snapshot: RunTreeSnapshot;
  /** What is stored twice (a message id, an event id): always a defect, whatever the reference says. */
  duplicates: string[];
  /** Replaces every run id of the tree in `text` by the run's name. */
  rename(text: string): string;
}

/** Reads a run tree from Redis as a snapshot (see RunTreeSnapshot). */
export async function readRunTree(
  source: { engine: Engine; redis: RedisClient },
  sessionId: string,
  rootId: string,
): Promise<RunTreeRead> {
  const { engine, redis } = source;
  const names = new Map<string, string>();
  const runs: RunView[] = [];
  const visit = async (runId: string, name: string) => {
    const run = await engine.getRun(runId);
    if (!run) throw new Error(`run ${runId} is missing`);
    names.set(runId, name);
    runs.push(run);
    const childIds = await redis.smembers(runKeys(engine.space, sessionId, runId).children);
    const children = (await Promise.all(childIds.map((id) => engine.getRun(id)))).flatMap((child) =>
      child ? [child] : [],
    );
    // Deterministic order: by the step that started them, then by agent.
    children.sort((a, b) => (a.created_at + a.agent).localeCompare(b.created_at + b.agent));
    const seen = new Map<string, number>();
    for (const child of children) {
      const count = (seen.get(child.agent) ?? 0) + 1;
      seen.set(child.agent, count);
      await visit(child.id, `${name}/${child.agent}${count > 1 ? `#${count}` : ''}`);
    }
  };
  await visit(rootId, 'root');
  const rename = (text: string) => {
    let out = text;
    for (const [id, name] of names) out = out.replaceAll(id, name);
    return out;
  };
  const duplicates: string[] = [];
  const events = await engine.readEvents(sessionId);
  duplicates.push(...repeated(events.map((event) => event.id)).map((id) => `event ${id} is stored twice`));
  const snapshot: RunTreeSnapshot['runs'] = {};
  for (const run of runs) {
    const name = names.get(run.id) ?? run.id;
    const chat: Message[] = await engine.readChat(sessionId, { chatId: run.chat_id });
    duplicates.push(
      ...repeated(chat.map((message) => message.id)).map((id) => `message ${id} of ${name} is stored twice`),
    );
    snapshot[name] = {
      status: run.status,
      chat: chat.map((message) =>
        JSON.parse(withoutExecutionTimes(rename(JSON.stringify({ ...message, created_at: 'T' })))),
      ),
      events: events
        .filter((event) => event.run_id === run.id)
        .map((event) => withoutExecutionTimes(rename(JSON.stringify(comparableEvent(event)))))
        .sort(),
    };
  }
  return {
    snapshot: {
      status: runs[0]?.status ?? 'missing',
      result: runs[0]?.result ?? null,
      runs: snapshot,
      runCount: await redis.scard(runKeys(engine.space, sessionId, rootId).runs),
    },
    duplicates,
    rename,
  };
}

/**
 * An event without what differs between two executions of one scenario: its id and time, times inside it,
 * wall-clock lengths, and the marker of a tool call re-run after a crash (`interrupted: "rerun"`), which
 * must otherwise equal the uninterrupted call.
 */
export function comparableEvent(event: RatchetEvent): Record<string, unknown> {
  const { id: _id, time: _time, ...rest } = event;
  const data = { ...(rest.data as Record<string, unknown>) };
  if (data.message && typeof data.message === 'object') data.message = { ...data.message, created_at: 'T' };
  if (data.interrupted === 'rerun') delete data.interrupted;
  if (typeof data.duration_ms === 'number') data.duration_ms = 'D';
  if (data.metadata && typeof data.metadata === 'object')
    data.metadata = { ...(data.metadata as Record<string, unknown>), execution_time_ms: 'D' };
  return { ...rest, data };
}

/**
 * A wall-clock length, wherever result metadata carries one (an agent_end event, the answers spawn_agents
 * returns, inside a tool result's JSON text too): present, but not the same in two runs.
 */
export function withoutExecutionTimes(json: string): string {
  return json.replace(/(\\?"execution_time_ms\\?":)\d+/g, (_match, key: string) => `${key}0`);
}

function repeated(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const id of ids) (seen.has(id) ? twice : seen).add(id);
  return [...twice];
}
