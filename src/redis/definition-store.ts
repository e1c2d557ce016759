import { parseJsonRecord } from '../schemas/parse.js';
import { type AgentDefinition, agentDefinitionSchema } from '../workflows/agent-definition.js';
import type { DefinitionToRecord } from '../workflows/core/run-creation.js';
import { journalField } from '../workflows/journal.js';
import type { RedisClient } from './connection.js';
import { definitionKey, type KeySpace, runKeys } from './keys.js';
import { defineScripts, runScript } from './scripts.js';

/** Definitions a process keeps decoded (a definition is immutable: a cached one is never stale). */
const defaultCacheSize = 256;

/**
 * The agent definitions runs work under (decision 0030), content-addressed: `record` writes one once per
 * hash (and once per process: a recorded definition is never removed), `read` reads one once per hash and
 * process, into a bounded cache, so a step resolving its run's definition adds no round trip.
 */
export class DefinitionStore {
  private readonly recorded = new Set<string>();
  private readonly cache = new Map<string, AgentDefinition>();
  private readonly reading = new Map<string, Promise<AgentDefinition | undefined>>();
  private readonly recording = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: RedisClient,
    private readonly space: Pick<KeySpace, 'prefix'>,
    private readonly cacheSize = defaultCacheSize,
  ) {
    defineScripts(redis);
  }

  /** Stores a definition unless it is there already (idempotent: any process may write any hash). */
  async record(definition: DefinitionToRecord): Promise<void> {
    if (this.recorded.has(definition.hash)) return;
    await this.once(this.recording, definition.hash, async () => {
      await runScript(
        this.redis,
        'record-definition',
        [definitionKey(this.space, definition.hash)],
        [definition.text],
      );
      // Bounded like the cache: forgetting a hash costs one idempotent write, never a wrong answer.
      if (this.recorded.size >= this.cacheSize * 4) this.recorded.clear();
      this.recorded.add(definition.hash);
    });
  }

  /** The definition of a hash, or undefined when none is recorded under it. */
  async read(hash: string): Promise<AgentDefinition | undefined> {
    const cached = this.cache.get(hash);
    if (cached) {
      // Most recently used last: the first is the one to forget.
      this.cache.delete(hash);
      this.cache.set(hash, cached);
      return cached;
    }
    return this.once(this.reading, hash, async () => {
      const text = await this.redis.get(definitionKey(this.space, hash));
      if (text === null) return undefined;
      const definition = parseJsonRecord(agentDefinitionSchema, text, `definition ${hash}`);
      this.cache.set(hash, definition);
      if (this.cache.size > this.cacheSize) {
        const oldest = this.cache.keys().next().value;
        if (oldest !== undefined) this.cache.delete(oldest);
      }
      return definition;
    });
  }

  /**
   * One command per hash however many steps ask at once: the first steps of runs started together (a worker
   * takes `concurrency` of them at a time) share the one read or write in flight instead of each sending
   * its own (counted in test/integration/definition-reads.int.test.ts).
   */
  private once<T>(inFlight: Map<string, Promise<T>>, hash: string, work: () => Promise<T>): Promise<T> {
    const pending = inFlight.get(hash);
    if (pending !== undefined) return pending;
    const started = work().finally(() => inFlight.delete(hash));
    inFlight.set(hash, started);
    return started;
  }
}

/** What asking a run to upgrade found: done, or why not. */
export type UpgradeRequestCode = 'OK' | 'NO_RUN' | 'FINISHED' | 'NO_DEFINITION';

/**
 * Asks a run to move to its workers' current definition at its next iteration (POST /v1/runs/:id/upgrade):
 * `request-upgrade.lua` notes the time in its journal, read by the next iteration's load.
 */
export async function requestUpgrade(
  redis: RedisClient,
  space: KeySpace,
  sessionId: string,
  runId: string,
  at: string,
): Promise<{ code: UpgradeRequestCode; detail: string | undefined }> {
  defineScripts(redis);
  const keys = runKeys(space, sessionId, runId);
  const [code, detail] = await runScript(
    redis,
    'request-upgrade',
    [keys.run, keys.journal],
    [journalField.upgradeRequest, at],
  );
  return { code: code as UpgradeRequestCode, detail };
}
