import type { RedisClient } from './connection.js';
import { type KeySpace, memoryKeys } from './keys.js';
import { runScript } from './scripts.js';

/** Whose memory: one agent's, or the whole deployment's (every agent reads it). */
export type MemoryScope = { kind: 'agent'; agent: string } | { kind: 'deployment' };

/** The most a memory holds, and how long a note lives after its last write. */
export interface MemoryLimits {
  maxNotes: number;
  maxBytes: number;
  retentionMs: number;
}

export type MemoryWriteResult =
  | { kind: 'written' | 'deleted' | 'repeated' | 'not_found' }
  | { kind: 'full'; notes: number }
  | { kind: 'too_big'; bytes: number };

/**
 * Memory that outlives sessions (the `memory` toolbox, GET /v1/agents/:name/memory, and what a run is given
 * at its start): notes by name, as the JSON text the toolbox wrote; the toolbox parses and checks them.
 */
export interface MemoryStore {
  /** Writes a note, or deletes it when `json` is null, once per call key (memory-write.lua). */
  write(
    scope: MemoryScope,
    write: { name: string; json: string | null; callKey: string; nowMs: number },
    limits: MemoryLimits,
  ): Promise<MemoryWriteResult>;
  /** Every note's JSON text by name (expired notes included until the next write drops them). */
  read(scope: MemoryScope): Promise<Record<string, string>>;
}

function scopeName(scope: MemoryScope): string {
  return scope.kind === 'agent' ? `agent:${scope.agent}` : 'deployment';
}

export function redisMemory(redis: RedisClient, space: KeySpace): MemoryStore {
  return {
    async write(scope, write, limits) {
      const keys = memoryKeys(space, scopeName(scope));
      const [code, count] = await runScript(
        redis,
        'memory-write',
        [keys.notes, keys.expiry, keys.calls],
        [
          write.name,
          write.json ?? '',
          write.callKey,
          write.nowMs,
          write.nowMs + limits.retentionMs,
          limits.maxNotes,
          limits.maxBytes,
          limits.retentionMs,
        ],
      );
      if (code === 'FULL') return { kind: 'full', notes: Number(count) };
      if (code === 'TOO_BIG') return { kind: 'too_big', bytes: Number(count) };
      if (code === 'REPEATED') return { kind: 'repeated' };
      if (code === 'NOT_FOUND') return { kind: 'not_found' };
      return { kind: write.json === null ? 'deleted' : 'written' };
    },
    read: (scope) => redis.hgetall(memoryKeys(space, scopeName(scope)).notes),
  };
}
