import type { MemoryScope, MemoryStore } from '../tools/index.js';
import type { RedisClient } from './connection.js';
import { type KeySpace, memoryKeys } from './keys.js';
import { defineScripts, runScript } from './scripts.js';

function scopeName(scope: MemoryScope): string {
  return scope.kind === 'agent' ? `agent:${scope.agent}` : 'deployment';
}

/** The memory toolbox's port in Redis: one hash of notes per scope, written by memory-write.lua. */
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

/**
 * The memory port on a connection opened for it alone (`ratchet mcp --toolboxes memory`), which no engine has
 * given the scripts yet.
 */
export function redisMemoryOnOwnConnection(redis: RedisClient, space: KeySpace): MemoryStore {
  defineScripts(redis);
  return redisMemory(redis, space);
}
