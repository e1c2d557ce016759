import { afterEach, describe, expect, it } from 'vitest';
import { memoryKeys } from '../../src/redis/keys.js';
import { redisMemory } from '../../src/redis/memory-store.js';
import { registerSecrets } from '../../src/secrets/index.js';
import { readMemory } from '../../src/tools/builtin/memory/memory-notes.js';
import { memoryToolbox } from '../../src/tools/builtin/memory/memory-toolbox.js';
import type { ToolContext } from '../../src/tools/index.js';
import { crashAndTakeOver } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';
import { callError, callOk, sessionAccess, toolContext, toolsSettings } from '../helpers/tool-calls.js';

// The memory toolbox against a real Redis: each call as a tool step makes it (its idempotency key is the
// step's, the same on a repeat), one harness (own key prefix) per test.
let harness: Harness | undefined;
const crashed: Harness[] = [];
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await Promise.allSettled(crashed.splice(0).map((started) => started.close()));
});

const start = new Date('2026-01-01T00:00:00.000Z');
const dayMs = 24 * 3600 * 1000;

function setUp(memory: Record<string, unknown> = {}) {
  harness = new Harness({});
  const space = { prefix: harness.prefix, shards: 1 };
  const store = redisMemory(harness.redis, space);
  const toolbox = memoryToolbox({ settings: toolsSettings({ memory }).memory });
  const context = (callKey: string, overrides: Partial<ToolContext> = {}, now = start): ToolContext =>
    toolContext({
      idempotencyKey: callKey,
      agent: 'coder',
      memory: store,
      session: sessionAccess({ now: () => now }),
      ...overrides,
    });
  return { store, toolbox, context, space, redis: harness.redis };
}

describe('the memory toolbox', () => {
  it('a call repeated after a crash writes nothing again, even after a later call changed the note', async () => {
    const { store, toolbox, context } = setUp();
    await callOk(toolbox, 'memory_write', { name: 'style', content: 'tabs' }, context('run-1:tool:1:0'));
    await callOk(toolbox, 'memory_write', { name: 'style', content: 'spaces' }, context('run-1:tool:2:0'));
    // The first call runs again with its own key (a takeover): the later write stands.
    const repeated = await callOk(
      toolbox,
      'memory_write',
      { name: 'style', content: 'tabs' },
      context('run-1:tool:1:0'),
    );
    expect(repeated).toEqual({ written: true, name: 'style', scope: 'agent' });
    // A note without a name is named after its call: a repeat writes the same note, not a second one.
    const unnamed = await callOk(toolbox, 'memory_write', { content: 'likes short answers' }, context('k3'));
    await callOk(toolbox, 'memory_write', { content: 'likes short answers' }, context('k3'));
    const notes = await readMemory(store, 'coder', start);
    expect(notes.map((note) => [note.name, note.content])).toEqual([
      [unnamed.name, 'likes short answers'],
      ['style', 'spaces'],
    ]);
  });

  it("an agent's notes are its own; the deployment's are everyone's", async () => {
    const { store, toolbox, context } = setUp();
    await callOk(toolbox, 'memory_write', { name: 'mine', content: 'a' }, context('k1'));
    await callOk(
      toolbox,
      'memory_write',
      { name: 'shared', content: 'b', scope: 'deployment' },
      context('k2'),
    );
    await callOk(
      toolbox,
      'memory_write',
      { name: 'other', content: 'c' },
      context('k3', { agent: 'reviewer' }),
    );
    const seen = (agent: string) =>
      readMemory(store, agent, start).then((notes) => notes.map((note) => `${note.scope}:${note.name}`));
    expect(await seen('coder')).toEqual(['agent:mine', 'deployment:shared']);
    expect(await seen('reviewer')).toEqual(['agent:other', 'deployment:shared']);
    const read = await callOk(toolbox, 'memory_read', {}, context('k4'));
    expect(read.notes.map((note: { name: string }) => note.name)).toEqual(['mine', 'shared']);
    await callOk(toolbox, 'memory_delete', { name: 'mine' }, context('k5'));
    expect(await seen('coder')).toEqual(['deployment:shared']);
    expect(await callError(toolbox, 'memory_delete', { name: 'mine' }, context('k6'))).toContain(
      'no agent memory note "mine"',
    );
  });

  it('is bounded: notes per scope, bytes per scope, characters per note', async () => {
    const { toolbox, context } = setUp({ max_notes: 2, max_bytes: 1200, max_note_chars: 600 });
    await callOk(toolbox, 'memory_write', { name: 'a', content: 'x' }, context('k1'));
    await callOk(toolbox, 'memory_write', { name: 'b', content: 'y' }, context('k2'));
    expect(await callError(toolbox, 'memory_write', { name: 'c', content: 'z' }, context('k3'))).toContain(
      'holds 2 notes, the most it may (tools.memory.max_notes)',
    );
    // Rewriting a note that exists is always allowed by the count.
    await callOk(toolbox, 'memory_write', { name: 'a', content: 'x2' }, context('k4'));
    await callOk(toolbox, 'memory_write', { name: 'a', content: 'x'.repeat(500) }, context('k5'));
    expect(
      await callError(toolbox, 'memory_write', { name: 'b', content: 'y'.repeat(600) }, context('k6')),
    ).toContain('over tools.memory.max_bytes (1200)');
    expect(
      await callError(toolbox, 'memory_write', { name: 'b', content: 'y'.repeat(601) }, context('k7')),
    ).toContain('content');
  });

  it('a secret the worker knows is redacted before it is kept', async () => {
    const secret = 'sk-memory-test-secret-9f8e7d6c5b';
    registerSecrets([secret]);
    const { store, toolbox, context } = setUp();
    await callOk(toolbox, 'memory_write', { name: 'key', content: `the key is ${secret}` }, context('k1'));
    const [note] = await readMemory(store, 'coder', start);
    expect(note?.content).not.toContain(secret);
    expect(note?.content).toMatch(/^the key is /);
  });

  it('a note not rewritten within retention_days is forgotten, and dropped at the next write', async () => {
    const { store, toolbox, context, space, redis } = setUp({ retention_days: 2 });
    await callOk(toolbox, 'memory_write', { name: 'old', content: 'from day 0' }, context('k1'));
    const later = new Date(start.getTime() + 3 * dayMs);
    expect(await readMemory(store, 'coder', new Date(start.getTime() + dayMs))).toHaveLength(1);
    expect(await readMemory(store, 'coder', later)).toEqual([]);
    await callOk(toolbox, 'memory_write', { name: 'new', content: 'from day 3' }, context('k2', {}, later));
    const keys = memoryKeys(space, 'agent:coder');
    expect(await redis.hkeys(keys.notes)).toEqual(['new']);
    // The keys themselves expire with the retention window.
    const ttl = await redis.pttl(keys.notes);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2 * dayMs);
  });

  it('a write whose worker is SIGKILLed before its outcome is recorded is written once when the call runs again', async () => {
    const outcome = await crashAndTakeOver(
      {
        replies: [
          { tool_calls: [{ name: 'memory_write', arguments: { content: 'prefers short answers' } }] },
          { text: 'noted' },
        ],
      },
      'remember',
      'tool.before_commit@1',
      (started) => crashed.push(started),
      { agent: { toolboxes: ['memory'] } },
    );
    const space = { prefix: outcome.harness.prefix, shards: 1 };
    const notes = await readMemory(redisMemory(outcome.harness.redis, space), 'agent', new Date());
    // A note without a name is named after its call, whose key is the same on the rerun: one note.
    expect(notes.map((note) => note.content)).toEqual(['prefers short answers']);
    expect(await outcome.harness.redis.zcard(memoryKeys(space, 'agent:agent').calls)).toBe(1);
  });
});
