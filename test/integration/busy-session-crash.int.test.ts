import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { textOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

const repoRoot = resolve(import.meta.dirname, '../..');

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** "work" makes the run call slow_echo for 1.5 s, then answer; anything else is answered at once. */
const script: Script = {
  rules: [
    {
      when: { role: 'user', contains: 'work for minutes' },
      reply: {
        text: 'working',
        tool_calls: [{ name: 'slow_echo', arguments: { text: 'x', delay_ms: 180_000 } }],
      },
    },
    {
      when: { role: 'user', contains: 'work long' },
      reply: {
        text: 'working',
        tool_calls: [{ name: 'slow_echo', arguments: { text: 'x', delay_ms: 15_000 } }],
      },
    },
    {
      when: { role: 'user', contains: 'work' },
      reply: {
        text: 'working',
        tool_calls: [{ name: 'slow_echo', arguments: { text: 'x', delay_ms: 1500 } }],
      },
    },
  ],
  default: { text: 'done' },
};

function busyHarness(worker: Record<string, number> = {}): Harness {
  harness = new Harness({
    script,
    agent: { options: { max_iterations: 10, max_queued_messages: 25 } },
    worker,
  });
  return harness;
}

async function inToolCall(h: Harness, sessionId: string, runId: string): Promise<void> {
  await waitFor(
    async () =>
      (await h.events(sessionId)).some((event) => event.run_id === runId && event.kind === 'tool_call_start'),
    30_000,
    'the tool call',
  );
}

/** Root runs of the session not finished, as the run records say. */
async function unfinishedRuns(h: Harness, sessionId: string): Promise<number> {
  const page = await h.engine.listRuns({ sessionId, root: true, limit: 50 });
  return page.runs.filter((run) => !['completed', 'failed', 'cancelled'].includes(run.status)).length;
}

/** Sends a message from a process of its own armed with a crash point: it must die there by SIGKILL. */
async function sendAndDie(h: Harness, crashAt: string, args: string[]): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(repoRoot, 'test/fixtures/engine-client.ts'),
      '--config',
      h.configPath,
      'message',
      ...args,
    ],
    { cwd: repoRoot, env: { ...process.env, RATCHET_CRASH_AT: crashAt }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exit = await new Promise<NodeJS.Signals | null>((resolveExit) =>
    child.once('exit', (_code, signal) => resolveExit(signal)),
  );
  expect(exit, output).toBe('SIGKILL');
  expect(output).toContain(`crash point ${crashAt} reached`);
}

describe('messages to a busy session under SIGKILL', () => {
  it.each([
    'tool.after_commit',
    'iteration.before_steer_commit',
    'iteration.after_steer_commit',
    'iteration.after_model_call@2',
  ])('a steered message killed at %s is in the next model request, once', async (point) => {
    const h = busyHarness();
    const { id: sessionId } = await h.engine.createSession({});
    const doomed = h.spawnWorker({ crashAt: point });
    const first = await h.engine.sendMessage({ sessionId, input: 'work 1' });
    await inToolCall(h, sessionId, first.runId);
    const steered = await h.engine.sendMessage({ sessionId, input: 'also this', onBusy: 'steer' });
    expect(steered.delivery).toBe('steered');
    const exit = await waitForExit(doomed, 30_000);
    expect(exit.signal, doomed.output()).toBe('SIGKILL');
    const rescuer = h.spawnWorker();
    const run = await h.engine.waitForRun(first.runId, { timeoutMs: 45_000 });
    expect(run.status, rescuer.output()).toBe('completed');
    const calls = h.modelCalls().filter((call) => call.run_id === first.runId && call.iteration === 2);
    expect(calls.length).toBeGreaterThanOrEqual(1);
    for (const call of calls) {
      expect(call.messages.filter((message) => message.text === 'also this')).toHaveLength(1);
    }
    const chat = await h.transcript(sessionId);
    expect(chat.filter((message) => textOf(message) === 'also this')).toHaveLength(1);
    expect(new Set(chat.map((message) => message.id)).size).toBe(chat.length);
    const events = await h.events(sessionId);
    expect(events.filter((event) => event.kind === 'message_steered')).toHaveLength(1);
    expect((await h.engine.getSession(sessionId))?.queued_messages).toEqual([]);
    expect((await rescuer.stop()).code).toBe(0);
  });

  it('a queued message whose run ends in a commit the worker dies after starts one run, once', async () => {
    const h = busyHarness();
    const { id: sessionId } = await h.engine.createSession({});
    // Iteration 2's commit ends the run (and marks the session); the worker dies right after it.
    const doomed = h.spawnWorker({ crashAt: 'iteration.after_commit@2' });
    const first = await h.engine.sendMessage({ sessionId, input: 'work 1' });
    await inToolCall(h, sessionId, first.runId);
    const queued = await h.engine.sendMessage({ sessionId, input: 'next please', onBusy: 'queue' });
    expect(queued.delivery).toBe('queued');
    expect((await waitForExit(doomed, 30_000)).signal, doomed.output()).toBe('SIGKILL');
    const rescuer = h.spawnWorker();
    await waitFor(async () => (await h.engine.getRun(queued.runId)) !== undefined, 30_000, 'the queued run');
    const run = await h.engine.waitForRun(queued.runId, { timeoutMs: 30_000 });
    expect(run.status, rescuer.output()).toBe('completed');
    const chat = await h.transcript(sessionId);
    expect(chat.filter((message) => message.role === 'user').map(textOf)).toEqual(['work 1', 'next please']);
    const started = (await h.events(sessionId)).filter((event) => event.kind === 'run_started');
    expect(started.map((event) => event.run_id)).toEqual([first.runId, queued.runId]);
    expect((await rescuer.stop()).code).toBe(0);
  });

  it.each(['message.before_interrupt_commit', 'message.after_interrupt_commit'])(
    'an interruption whose sender dies at %s: one run cancelled and one started, or neither; never two active',
    async (point) => {
      const h = busyHarness();
      await h.startWorker();
      const { id: sessionId } = await h.engine.createSession({});
      // Long enough for the sender's process to start while the run is still active, however loaded the
      // machine (a 15 s call ended first under load once, and the sender then started a run).
      const first = await h.engine.sendMessage({ sessionId, input: 'work for minutes' });
      await inToolCall(h, sessionId, first.runId);
      let most = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          most = Math.max(most, await unfinishedRuns(h, sessionId));
          await new Promise((resolveSample) => setTimeout(resolveSample, 10));
        }
      })();
      await sendAndDie(h, point, [sessionId, 'interrupt', 'instead']);
      // A sender that died before its commit left the old run alone: it is still going, and ends by a cancel.
      if (point === 'message.before_interrupt_commit') {
        expect((await h.engine.getRun(first.runId))?.status).toBe('running');
        await h.engine.cancelRun(first.runId);
      }
      await waitFor(async () => (await unfinishedRuns(h, sessionId)) === 0, 45_000, 'the runs to end');
      sampling = false;
      await sampler;
      expect(most).toBe(1);
      const runs = (await h.engine.listRuns({ sessionId, root: true, limit: 50 })).runs;
      const statuses = runs
        .map((run) => (run.id === first.runId ? `old:${run.status}` : `new:${run.status}`))
        .sort();
      expect(statuses).toEqual(
        point === 'message.before_interrupt_commit' ? ['old:cancelled'] : ['new:completed', 'old:cancelled'],
      );
    },
  );

  it("an interruption whose sender dies right after its commit still aborts the old run's call in flight", async () => {
    // One slot: the new run can start only once the old run's 3-minute tool call has let go of it, which
    // happens at once only if the abort reached the worker without the (dead) sender's help.
    const h = busyHarness({ concurrency: 1 });
    await h.startWorker();
    const { id: sessionId } = await h.engine.createSession({});
    const first = await h.engine.sendMessage({ sessionId, input: 'work for minutes' });
    await inToolCall(h, sessionId, first.runId);
    const sent = Date.now();
    await sendAndDie(h, 'message.after_interrupt_commit', [sessionId, 'interrupt', 'instead']);
    expect((await h.engine.getRun(first.runId))?.status).toBe('cancelled');
    const runs = (await h.engine.listRuns({ sessionId, root: true, limit: 50 })).runs;
    const next = runs.find((run) => run.id !== first.runId);
    expect(next).toBeDefined();
    const run = await h.engine.waitForRun(next?.id ?? '', { timeoutMs: 60_000 });
    expect(run.status).toBe('completed');
    expect(Date.now() - sent).toBeLessThan(60_000);
    const chat = await h.transcript(sessionId);
    expect(chat.filter((message) => message.role === 'user').map(textOf)).toEqual([
      'work for minutes',
      'instead',
    ]);
  });

  it('interrupt while the worker of the active run is killed: the old run stays cancelled, the new one runs', async () => {
    const h = busyHarness();
    const { id: sessionId } = await h.engine.createSession({});
    const doomed = h.spawnWorker({ crashAt: 'tool.mid_call' });
    const first = await h.engine.sendMessage({ sessionId, input: 'work 1' });
    expect((await waitForExit(doomed, 30_000)).signal, doomed.output()).toBe('SIGKILL');
    const sent = await h.engine.sendMessage({ sessionId, input: 'instead', onBusy: 'interrupt' });
    expect(sent).toMatchObject({ delivery: 'interrupted', interruptedRunId: first.runId });
    const rescuer = h.spawnWorker();
    const run = await h.engine.waitForRun(sent.runId, { timeoutMs: 30_000 });
    expect(run.status, rescuer.output()).toBe('completed');
    expect((await h.engine.getRun(first.runId))?.status).toBe('cancelled');
    // The old run's step, taken over, found it cancelled: no further model call for it.
    expect(h.modelCalls().filter((call) => call.run_id === first.runId)).toHaveLength(1);
    const ends = (await h.events(sessionId)).filter((event) => event.kind === 'run_cancelled');
    expect(ends.map((event) => event.run_id)).toEqual([first.runId]);
    expect((await rescuer.stop()).code).toBe(0);
  });
});
