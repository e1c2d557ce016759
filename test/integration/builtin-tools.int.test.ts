import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Message, textOf, toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Writes a file, reads it back, tries to read the config outside the workspace, then answers. */
const script: Script = {
  replies: [
    { tool_calls: [{ name: 'write_file', arguments: { path: 'notes/plan.md', content: '1. ship it\n' } }] },
    {
      tool_calls: [
        { name: 'read_file', arguments: { path: 'notes/plan.md' } },
        { name: 'read_file', arguments: { path: '../ratchet.json' } },
      ],
    },
    { text: 'The plan says: ship it.' },
  ],
};

function builtinHarness(): Harness {
  return new Harness({
    script,
    agent: { toolboxes: ['filesystem', 'search'] },
    config: { tools: { workspace: 'workspace', filesystem: { max_read_bytes: 4096 } } },
  });
}

function results(chat: readonly Message[]) {
  return chat.flatMap((message) => toolResultsOf(message));
}

describe('built-in toolboxes in a run', () => {
  it('a scripted agent writes and reads a workspace file through real tool jobs; an escape is an error result', async () => {
    harness = builtinHarness();
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'make a plan' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('The plan says: ship it.');

    // The workspace is relative to the config file's directory.
    expect(readFileSync(join(harness.dir, 'workspace', 'notes', 'plan.md'), 'utf8')).toBe('1. ship it\n');
    const chat = await harness.transcript(sessionId);
    const [written, read, escaped] = results(chat);
    expect(written).toMatchObject({ is_error: false });
    expect(JSON.parse(written?.content ?? '')).toEqual({ path: 'notes/plan.md', bytes: 11 });
    expect(read).toMatchObject({ is_error: false });
    expect(JSON.parse(read?.content ?? '')).toMatchObject({ content: '1. ship it\n', truncated: false });
    expect(escaped).toMatchObject({ is_error: true });
    expect(escaped?.content).toContain('"../ratchet.json" is outside the workspace');
    expect(textOf(chat.at(-1) ?? { parts: [] })).toBe('The plan says: ship it.');
    // Each call ran as its own tool job and recorded its outcome.
    const events = await harness.events(sessionId);
    expect(events.filter((event) => event.kind === 'tool_call_end')).toHaveLength(3);
  });

  it('a worker process builds the built-in toolboxes from the config file it loads', async () => {
    harness = builtinHarness();
    harness.spawnWorker();
    const { runId } = await harness.engine.startRun({ input: 'make a plan' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(existsSync(join(harness.dir, 'workspace', 'notes', 'plan.md'))).toBe(true);
  });
});
