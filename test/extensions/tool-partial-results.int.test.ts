import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/chat/index.js';
import type { RatchetEvent } from '../../src/events/event.js';
import { partialResultLimits } from '../../src/tools/index.js';
import { reportingToolbox } from '../fixtures/reporting-tools.js';
import { waitForExit } from '../helpers/crash-scenario.js';
import { extensionScope } from '../helpers/extension-scope.js';
import { ExtensionWorld } from '../helpers/extension-world.js';

// A custom tool reports named intermediate results through its context (`reportProgress({data})`, decision
// 0049): merged into the run's `metadata.partial_results` with the report's commit, bounded as report_progress's
// data (the tool passes on what a hostile model gave it), and kept once when a crash makes the handler run
// again.

const scope = extensionScope();

const report = (...data: unknown[]) => ({
  tool_calls: data.map((value) => ({ name: 'report_findings', arguments: { data: value } })),
});

function newWorld(replies: unknown[]): ExtensionWorld {
  const world = new ExtensionWorld(
    {
      providers: [{ name: 'model', kind: 'scripted', model: 'test', replies }],
      agents: [{ name: 'agent', provider: 'model', toolboxes: ['findings'] }],
    },
    {},
    { toolboxes: [reportingToolbox()] },
  );
  return scope.keep(world);
}

const toolErrors = (chat: Message[]) =>
  chat
    .flatMap((message) => message.parts)
    .flatMap((part) => (part.type === 'tool_result' && part.is_error ? [part.content] : []));

const findingsEvents = (events: RatchetEvent[]) =>
  events.filter((event) => event.kind === 'progress' && /findings of/.test(JSON.stringify(event.data)));

describe("a custom tool's reportProgress with data", () => {
  it('merges it into partial_results, calls of one batch in parallel included, a name again replacing it', async () => {
    const world = newWorld([
      report({ sources: ['a', 'b'] }, { draft: 'v1' }, { verdict: null }),
      report({ draft: { text: 'v2' } }),
      { text: 'done' },
    ]);
    await world.start();
    const { runId, sessionId } = await world.engine.startRun({ input: 'research owls' });
    const run = await world.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status).toBe('completed');
    expect(run.partial_results).toEqual({
      sources: ['a', 'b'],
      draft: { text: 'v2' },
      verdict: null,
    });
    expect(toolErrors(await world.engine.readChat(sessionId))).toEqual([]);
    expect(findingsEvents(await world.engine.readEvents(sessionId))).toHaveLength(4);
    // A report with data is a report like any: the run's latest progress is the last one.
    expect(run.progress).toMatchObject({ message: expect.stringMatching(/^findings of /) });
  });

  it("refuses a hostile tool's oversized or malformed data with an error naming the field, keeping nothing of it", async () => {
    const tooMany = Object.fromEntries(
      Array.from({ length: partialResultLimits.names + 1 }, (_, index) => [`r${index}`, index]),
    );
    const world = newWorld([
      report({ big: 'x'.repeat(partialResultLimits.valueChars) }),
      report({ 'bad name!': 1 }),
      report(tooMany),
      report({ ['n'.repeat(partialResultLimits.nameChars + 1)]: 1 }),
      report(['not', 'an', 'object']),
      report({ kept: true }),
      { text: 'done' },
    ]);
    await world.start();
    const { runId, sessionId } = await world.engine.startRun({ input: 'research owls' });
    const run = await world.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status).toBe('completed');
    expect(run.partial_results).toEqual({ kept: true });
    const errors = toolErrors(await world.engine.readChat(sessionId));
    expect(errors).toHaveLength(5);
    expect(errors[0]).toMatch(/reportProgress: data\.big: a value is at most 2000 characters as JSON/);
    expect(errors[1]).toMatch(/reportProgress: data\.bad name!: a name holds only letters, digits/);
    expect(errors[2]).toMatch(/reportProgress: data: 21 names, more than the 20 one report may carry/);
    expect(errors[3]).toMatch(/reportProgress: data\.n+: a name has at most 64 characters/);
    expect(errors[4]).toMatch(/reportProgress: data: /);
    // A refused report is not made: no progress event for it.
    expect(findingsEvents(await world.engine.readEvents(sessionId))).toHaveLength(1);
  });

  it('keeps no new name past the 20 a run keeps', async () => {
    const first = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`r${index}`, index]));
    const world = newWorld([report(first), report({ r0: 'again', extra: 1 }), { text: 'done' }]);
    await world.start();
    const { runId } = await world.engine.startRun({ input: 'research owls' });
    const run = await world.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.partial_results).toEqual({ ...first, r0: 'again' });
  });

  it('is kept once when the worker dies after the report, before the call is recorded, and the call runs again', async () => {
    const world = newWorld([report({ sources: ['a'] }), report({ sources: ['a', 'b'] }), { text: 'done' }]);
    const log = join(world.dir, 'handler.log');
    const { runId, sessionId } = await world.engine.startRun({ input: 'research owls' });
    const spawn = (crashAt?: string) =>
      scope.spawn(world, 'test/fixtures/reporting-tool-worker.ts', crashAt, { REPORT_TOOL_LOG: log });
    // The first call's report is committed; the worker dies before its outcome.
    const doomed = spawn('tool.before_commit');
    const exit = await waitForExit(doomed as never, 90_000);
    expect(exit.signal, doomed.output()).toBe('SIGKILL');
    expect(doomed.output()).toContain('crash point tool.before_commit reached');
    const rescuer = spawn();
    const run = await world.engine.waitForRun(runId, { timeoutMs: 90_000 });
    expect(run.status, rescuer.output()).toBe('completed');
    rescuer.child.kill('SIGTERM');
    expect((await rescuer.exited).code, rescuer.output()).toBe(0);
    // The first call's handler ran twice (the tool is idempotent); its report was made once.
    const handled = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    expect(handled).toHaveLength(3);
    expect(handled[0]).toBe(handled[1]);
    const reports = findingsEvents(await world.engine.readEvents(sessionId));
    expect(reports).toHaveLength(2);
    expect(new Set(reports.map((event) => event.id)).size).toBe(2);
    expect(run.partial_results).toEqual({ sources: ['a', 'b'] });
  }, 300_000);
});
