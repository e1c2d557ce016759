import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RatchetEvent } from '../../src/events/event.js';
import type { Script } from '../../src/models/index.js';
import { crashAndTakeOver } from '../helpers/crash-scenario.js';
import { Harness, type HarnessOptions } from '../helpers/harness.js';

const harnesses: Harness[] = [];
const track = (harness: Harness) => harnesses.push(harness);
afterEach(async () => {
  await Promise.allSettled(harnesses.splice(0).map((harness) => harness.close()));
});

const options: Omit<HarnessOptions, 'script'> = {
  agent: { toolboxes: ['filesystem', 'exec'] },
  config: {
    tools: {
      workspace: 'workspace',
      exec: { enabled: true, commands: ['node'] },
    },
  },
};

/** Writes a file, edits it, then runs a command that deletes it and creates another; then answers. */
const script: Script = {
  replies: [
    { tool_calls: [{ name: 'write_file', arguments: { path: 'plan.md', content: 'one\ntwo\n' } }] },
    {
      tool_calls: [
        { name: 'edit_file', arguments: { path: 'plan.md', old_string: 'two', new_string: 'three' } },
      ],
    },
    {
      tool_calls: [
        {
          name: 'run_command',
          arguments: {
            command: 'node',
            args: ['-e', "require('fs').rmSync('plan.md');require('fs').writeFileSync('done.txt','ok')"],
          },
        },
      ],
    },
    { text: 'done' },
  ],
};

function fileChanges(events: readonly RatchetEvent[]) {
  return events.flatMap((event) => (event.kind === 'file_change' ? [event.data] : []));
}

describe('file_change events', () => {
  it('each file a filesystem tool or a command changes is one event, before its call ends', async () => {
    const harness = new Harness({ ...options, script });
    track(harness);
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'work on the plan' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    const events = await harness.events(sessionId);
    const changes = fileChanges(events).map(({ tool_call_id: _id, ...data }) => data);
    expect(changes).toEqual([
      {
        iteration: 1,
        name: 'write_file',
        path: 'plan.md',
        change: 'created',
        size: 8,
        size_before: null,
        lines_added: 2,
        lines_removed: 0,
      },
      {
        iteration: 2,
        name: 'edit_file',
        path: 'plan.md',
        change: 'modified',
        size: 10,
        size_before: 8,
        lines_added: 1,
        lines_removed: 1,
      },
      { iteration: 3, name: 'run_command', path: 'done.txt', change: 'created', size: 2, size_before: null },
      { iteration: 3, name: 'run_command', path: 'plan.md', change: 'deleted', size: null, size_before: 10 },
    ]);
    // Each is committed with its call's outcome: just before that call's tool_call_end, with its call id.
    for (const [index, event] of events.entries()) {
      if (event.kind !== 'file_change') continue;
      const end = events.slice(index).find((later) => later.kind === 'tool_call_end');
      expect(end?.kind === 'tool_call_end' && end.data.tool_call_id).toBe(event.data.tool_call_id);
    }
  });

  // A worker dies after the handler wrote the file but before the outcome was recorded (the call is run
  // again: write_file is idempotent, and its rerun finds the file it wrote, so reports it modified), or
  // after it was recorded (the call is not run again): either way the file's change is one event.
  it.each([
    ['tool.before_commit', 'modified'],
    ['tool.after_commit', 'created'],
  ])('a write repeated after a SIGKILL at %s is reported once (%s)', async (point, change) => {
    const write: Script = {
      replies: [
        { tool_calls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'hello\n' } }] },
        { text: 'written' },
      ],
    };
    const outcome = await crashAndTakeOver(write, 'write it', `${point}@1`, track, options);
    const changes = fileChanges(await outcome.harness.events(outcome.sessionId));
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ name: 'write_file', path: 'out.txt', change, size: 6 });
    expect(readFileSync(join(outcome.harness.dir, 'workspace', 'out.txt'), 'utf8')).toBe('hello\n');
  });
});
