import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../src/chat/index.js';
import { RatchetError } from '../../src/errors/index.js';
import type { RatchetEvent } from '../../src/events/event.js';
import type { Script } from '../../src/models/index.js';
import { runKeys } from '../../src/redis/keys.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness, type HarnessOptions, normalizeEvents, normalizeTranscript } from '../helpers/harness.js';

// Retry and fork (decision 0022): a new run continues what another recorded, and pays for nothing twice.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const add = (a: number, b: number) => ({ tool_calls: [{ name: 'add', arguments: { a, b } }] });
/** Five iterations: four tool calls, then the answer. The model's n-th reply is at script position n - 1. */
const fiveIterations: Script = { replies: [add(1, 1), add(2, 2), add(3, 3), add(4, 4), { text: 'done' }] };
/** The same, with the model's third request failing with a 503 on each of the step's 3 attempts. */
const outage: Script = {
  replies: [
    add(1, 1),
    add(2, 2),
    { ...add(3, 3), fail: [1, 2, 3].map(() => ({ kind: 'server_error' as const, status: 503 })) },
    add(4, 4),
    { text: 'done' },
  ],
};

function start(options: HarnessOptions): Harness {
  harness = new Harness(options);
  return harness;
}

/** A run failed by a provider outage at its third model request, and the script without the outage. */
async function failedByOutage(h: Harness): Promise<{ runId: string; sessionId: string }> {
  const worker = await h.startWorker();
  const started = await h.engine.startRun({ input: 'count up' });
  const failed = await h.engine.waitForRun(started.runId, { timeoutMs: 30_000 });
  expect(failed.status).toBe('failed');
  expect(failed.error?.code).toBe('model_server_error');
  await worker.close(2000);
  // The outage is over: a worker started now reads the script without it.
  writeFileSync(join(h.dir, 'script.json'), JSON.stringify(fiveIterations));
  return started;
}

/** The model calls as the scripted model logged them, with their script position. */
function calls(
  h: Harness,
): { run_id: string; agent: string; position: number; messages: { id: string; role: string }[] }[] {
  return h.modelCalls() as unknown as ReturnType<typeof calls>;
}

/** The ids of the messages a model call was sent, the system prompt left out. */
function sent(call: { messages: { id: string; role: string }[] }): string[] {
  return call.messages.filter((message) => message.role !== 'system').map((message) => message.id);
}

describe('retry', () => {
  it('continues a run failed by a provider outage: no recorded reply or tool result is asked again', async () => {
    const h = start({ script: outage });
    const { runId, sessionId } = await failedByOutage(h);
    const before = calls(h);
    // Two recorded replies, then three attempts of the third request, each refused.
    expect(before.map((call) => call.position)).toEqual([0, 1, 2, 2, 2]);

    await h.startWorker();
    const retry = await h.engine.retryRun(runId);
    expect(retry.sessionId).toBe(sessionId);
    const done = await h.engine.waitForRun(retry.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    expect(done.result).toBe('done');
    expect(done.iteration).toBe(5);

    const after = calls(h).slice(before.length);
    expect(after.map((call) => [call.run_id, call.position])).toEqual([
      [retry.runId, 2],
      [retry.runId, 3],
      [retry.runId, 4],
    ]);
    // The retry's first request is the one the outage refused: the same chat, nothing asked again.
    expect(sent(after[0] ?? { messages: [] })).toEqual(sent(before[4] ?? { messages: [] }));

    const original = await h.engine.getRun(runId);
    expect(original?.status).toBe('failed');
    expect(original?.retried_by).toBe(retry.runId);
    expect(done.origin).toMatchObject({ kind: 'retry', run_id: runId, session_id: sessionId });
    // It is about what the run it continues was about, and its tree's usage (its run budget, the run list's
    // tree_usage) starts from the usage it carries over, as its own usage does.
    expect(done.input_line).toBe('count up');
    const treeUsage = await h.redis.hgetall(runKeys(h.engine.space, sessionId, retry.runId).treeUsage);
    expect(Number(treeUsage.input_tokens)).toBe(done.usage.input_tokens);
    expect(Number(treeUsage.output_tokens)).toBe(done.usage.output_tokens);
    expect(Number(treeUsage.requests)).toBe(done.usage.requests);
    const chat = await h.transcript(sessionId);
    expect(new Set(chat.map((message) => message.id)).size).toBe(chat.length);
    expect(chat.filter((message) => message.role === 'assistant')).toHaveLength(5);
    const events = await h.events(sessionId);
    const retryEvents = events.filter((event) => event.run_id === retry.runId).map((event) => event.kind);
    expect(retryEvents.slice(0, 3)).toEqual(['run_retried', 'run_started', 'agent_start']);
    expect(retryEvents.at(-1)).toBe('run_completed');
  });
});

describe('retry of a run whose delegation failed', () => {
  it("keeps the failed child's recorded result: the child is not retried and its model not asked again", async () => {
    const delegate = {
      tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'sub' } }],
    };
    const failing = {
      text: 'done',
      fail: [1, 2, 3].map(() => ({ kind: 'server_error' as const, status: 503 })),
    };
    // The lead's script is a file, so the outage can end; the helper's model refuses its key (the child fails).
    const scripts = mkdtempSync(join(tmpdir(), 'ratchet-retry-'));
    const leadScript = join(scripts, 'lead.json');
    writeFileSync(leadScript, JSON.stringify({ replies: [delegate, failing] }));
    try {
      const h = start({
        agents: [
          { name: 'lead', script: { script: leadScript } as unknown as Script },
          { name: 'helper', script: { default: { text: 'never', fail: [{ kind: 'auth' }] } } },
        ],
      });
      const worker = await h.startWorker();
      const { runId, sessionId } = await h.engine.startRun({ input: 'delegate it', agent: 'lead' });
      expect((await h.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('failed');
      const childId = calls(h).find((call) => call.agent === 'helper')?.run_id ?? '';
      expect((await h.engine.getRun(childId))?.status).toBe('failed');
      // The child's result is its parent's record: the child itself is neither retried nor forked.
      await expect(h.engine.retryRun(childId)).rejects.toMatchObject({
        code: 'run_not_retryable',
        message: expect.stringContaining(`retry the root run ${runId}`),
      });
      await expect(h.engine.forkRun(childId, { atIteration: 1 })).rejects.toMatchObject({
        code: 'run_not_forkable',
      });
      await worker.close(2000);
      writeFileSync(leadScript, JSON.stringify({ replies: [delegate, { text: 'done' }] }));

      const before = calls(h).length;
      await h.startWorker();
      const retry = await h.engine.retryRun(runId);
      const done = await h.engine.waitForRun(retry.runId, { timeoutMs: 30_000 });
      expect(done.status).toBe('completed');
      // One call: the lead's request the outage refused. The helper is not asked again.
      expect(
        calls(h)
          .slice(before)
          .map((call) => [call.agent, call.run_id, call.position]),
      ).toEqual([['lead', retry.runId, 1]]);
      expect((await h.engine.getRun(childId))?.status).toBe('failed');
      const results = (await h.transcript(sessionId)).filter((message) => message.role === 'tool');
      expect(results).toHaveLength(1);
      expect(results[0]?.parts[0]).toMatchObject({ is_error: true });
    } finally {
      rmSync(scripts, { recursive: true, force: true });
    }
  });
});

describe('retry of a cancelled run', () => {
  it('keeps the recorded result of a finished call and tells the model a cut-short one may have run', async () => {
    const h = start({
      script: {
        replies: [
          {
            tool_calls: [
              { name: 'charge_card', arguments: { amount: 5 } },
              { name: 'slow_echo', arguments: { text: 'late', delay_ms: 60_000 } },
            ],
          },
          { text: 'done' },
        ],
      },
    });
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'charge and echo' });
    await waitFor(
      async () =>
        (await h.events(sessionId)).some(
          (event) => event.kind === 'tool_call_end' && event.data.name === 'charge_card',
        ),
      30_000,
      'the charge to be recorded',
    );
    await h.engine.cancelRun(runId);
    const retry = await h.engine.retryRun(runId);
    const done = await h.engine.waitForRun(retry.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');

    // The charge ran once: its recorded result stands; the echo was cut short and is not run again.
    expect(h.effects().map((effect) => effect.label)).toEqual(['charge 5']);
    expect(calls(h).map((call) => [call.run_id, call.position])).toEqual([
      [runId, 0],
      [retry.runId, 1],
    ]);
    const results = (await h.transcript(sessionId)).filter((message) => message.role === 'tool');
    expect(results.map((message) => message.parts[0])).toEqual([
      expect.objectContaining({ is_error: false, content: '{"charged":5}' }),
      expect.objectContaining({
        is_error: true,
        content: expect.stringContaining(
          '(cancelled) while this call ran: it may or may not have taken effect',
        ),
      }),
    ]);
    // Both results complete the cancelled run's batch under its message ids, announced by the retry.
    expect(results.map((message) => message.id)).toEqual([`${runId}-i1-r0`, `${runId}-i1-r1`]);
    const added = (await h.events(sessionId)).filter(
      (event) => event.kind === 'message_added' && event.data.message.role === 'tool',
    );
    expect(added.map((event) => event.run_id)).toEqual([retry.runId, retry.runId]);
  });
});

describe('fork', () => {
  /** A finished five-iteration run of `agent`, and the model calls it made. */
  async function fiveIterationRun(h: Harness) {
    await h.startWorker();
    const started = await h.engine.startRun({ input: 'count up', agent: 'agent' });
    const run = await h.engine.waitForRun(started.runId, { timeoutMs: 30_000 });
    expect(run.status).toBe('completed');
    expect(run.iteration).toBe(5);
    const original = calls(h);
    expect(original.map((call) => call.position)).toEqual([0, 1, 2, 3, 4]);
    return { ...started, original };
  }

  it('at iteration 2 of 5 makes exactly the model calls after the fork point, on a copy of the chat', async () => {
    const h = start({ script: fiveIterations });
    const { runId, sessionId, original } = await fiveIterationRun(h);
    const fork = await h.engine.forkRun(runId, { atIteration: 2 });
    expect(fork.sessionId).not.toBe(sessionId);
    const done = await h.engine.waitForRun(fork.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    expect(done.result).toBe('done');
    expect(done.origin).toEqual({
      kind: 'fork',
      run_id: runId,
      session_id: sessionId,
      at_iteration: 2,
      input_run_id: runId,
    });
    expect(done.input_line).toBe('count up');

    const forked = calls(h).slice(original.length);
    expect(forked.map((call) => [call.run_id, call.position])).toEqual([
      [fork.runId, 2],
      [fork.runId, 3],
      [fork.runId, 4],
    ]);
    // Its first request is the original's third: the same messages, copied, none asked again.
    expect(sent(forked[0] ?? { messages: [] })).toEqual(sent(original[2] ?? { messages: [] }));

    const originalChat = await h.transcript(sessionId);
    const forkChat = await h.transcript(fork.sessionId);
    // Input, two replies and their results copied; then three replies and two results of its own.
    expect(forkChat.slice(0, 5)).toEqual(originalChat.slice(0, 5));
    expect(forkChat.slice(5).every((message) => message.id.startsWith(fork.runId))).toBe(true);
    expect(forkChat).toHaveLength(originalChat.length);

    const originEvents = (await h.events(sessionId)).filter((event) => event.kind === 'run_forked');
    expect(originEvents).toMatchObject([
      {
        run_id: fork.runId,
        data: { from_run_id: runId, fork_session_id: fork.sessionId, at_iteration: 2 },
      },
    ]);
    const agentStart = (await h.events(fork.sessionId)).find((event) => event.kind === 'agent_start');
    expect(agentStart?.data).toMatchObject({ origin: { kind: 'fork', run_id: runId, at_iteration: 2 } });
  });

  it('with a new message continues from the fork point after it', async () => {
    const h = start({ script: fiveIterations });
    const { runId, original } = await fiveIterationRun(h);
    const fork = await h.engine.forkRun(runId, { atIteration: 2, input: 'and one more thing' });
    const done = await h.engine.waitForRun(fork.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    const forked = calls(h).slice(original.length);
    expect(forked.map((call) => call.position)).toEqual([2, 3, 4]);
    expect(sent(forked[0] ?? { messages: [] })).toEqual([
      ...sent(original[2] ?? { messages: [] }),
      `${fork.runId}-in`,
    ]);
    expect(done.origin?.kind !== 'schedule' && done.origin?.input_run_id).toBe(fork.runId);
    expect(done.input_line).toBe('and one more thing');
  });

  it('with another agent: the stronger model answers from the copied chat, the original model is not asked', async () => {
    const h = start({
      agents: [
        { name: 'agent', script: fiveIterations },
        { name: 'strong', script: { default: { text: 'the strong answer' } } },
      ],
    });
    const { runId, original } = await fiveIterationRun(h);
    const fork = await h.engine.forkRun(runId, { atIteration: 2, agent: 'strong' });
    const done = await h.engine.waitForRun(fork.runId, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', result: 'the strong answer', agent: 'strong' });
    const forked = calls(h).slice(original.length);
    expect(forked.map((call) => [call.agent, call.run_id, call.position])).toEqual([
      ['strong', fork.runId, 2],
    ]);
    expect(sent(forked[0] ?? { messages: [] })).toEqual(sent(original[2] ?? { messages: [] }));
  });
});

describe('fork of a retried run', () => {
  /** One recorded iteration (a tool call and its result), then a 503 on each attempt of the second request. */
  const outageAtTwo: Script = {
    replies: [
      add(1, 1),
      { ...add(2, 2), fail: [1, 2, 3].map(() => ({ kind: 'server_error' as const, status: 503 })) },
      { text: 'done' },
    ],
  };
  const recovered: Script = { replies: [add(1, 1), add(2, 2), { text: 'done' }] };

  /** A run failed at its second request, and its retry, completed (iterations 2 and 3 are its own). */
  async function retriedRun(h: Harness) {
    const worker = await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'count up' });
    const failed = await h.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(failed).toMatchObject({ status: 'failed', iteration: 1 });
    await worker.close(2000);
    writeFileSync(join(h.dir, 'script.json'), JSON.stringify(recovered));
    await h.startWorker();
    const retry = await h.engine.retryRun(runId);
    const done = await h.engine.waitForRun(retry.runId, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', iteration: 3, result: 'done' });
    return { runId, sessionId, retryId: retry.runId, before: calls(h).length };
  }

  it("at the retried run's last iteration (whose reply the retry's journal copies) forks from the run that recorded it", async () => {
    const h = start({ script: outageAtTwo });
    const { runId, sessionId, retryId, before } = await retriedRun(h);
    const chat = await h.transcript(sessionId);
    const fork = await h.engine.forkRun(retryId, { atIteration: 1 });
    const done = await h.engine.waitForRun(fork.runId, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', result: 'done' });
    // The run that recorded iteration 1 is the retried one: the fork names it, as for any earlier iteration.
    expect(done.origin).toMatchObject({ kind: 'fork', run_id: runId, at_iteration: 1 });
    const forkChat = await h.transcript(fork.sessionId);
    // The input, the retried run's reply of iteration 1 and its result; then the fork's own.
    expect(forkChat.slice(0, 3)).toEqual(chat.slice(0, 3));
    expect(forkChat.slice(0, 3).map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(forkChat.slice(1, 3).every((message) => message.id.startsWith(`${runId}-`))).toBe(true);
    expect(forkChat.slice(3).every((message) => message.id.startsWith(`${fork.runId}-`))).toBe(true);
    expect(forkChat.map((message) => message.role)).toEqual(chat.map((message) => message.role));
    // Only what comes after the fork point is asked: script positions 1 and 2.
    expect(
      calls(h)
        .slice(before)
        .map((call) => [call.run_id, call.position]),
    ).toEqual([
      [fork.runId, 1],
      [fork.runId, 2],
    ]);
  });

  it("at an iteration of the retry's own forks from the retry", async () => {
    const h = start({ script: outageAtTwo });
    const { runId, sessionId, retryId, before } = await retriedRun(h);
    const chat = await h.transcript(sessionId);
    const fork = await h.engine.forkRun(retryId, { atIteration: 2 });
    const done = await h.engine.waitForRun(fork.runId, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', result: 'done' });
    expect(done.origin).toMatchObject({ kind: 'fork', run_id: retryId, at_iteration: 2 });
    const forkChat = await h.transcript(fork.sessionId);
    // The input and iteration 1 (the retried run's), iteration 2 (the retry's); then the fork's answer.
    expect(forkChat.slice(0, 5)).toEqual(chat.slice(0, 5));
    expect(forkChat.slice(1, 3).every((message) => message.id.startsWith(`${runId}-`))).toBe(true);
    expect(forkChat.slice(3, 5).every((message) => message.id.startsWith(`${retryId}-`))).toBe(true);
    expect(forkChat.slice(5).map((message) => [message.role, message.id.startsWith(fork.runId)])).toEqual([
      ['assistant', true],
    ]);
    expect(
      calls(h)
        .slice(before)
        .map((call) => [call.run_id, call.position]),
    ).toEqual([[fork.runId, 2]]);
  });
});

const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * Retries or forks in a client process of its own (as an API process would), armed with a crash point: it
 * must die there by SIGKILL.
 */
async function steerAndDie(h: Harness, crashAt: string, args: string[]): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'test/fixtures/engine-client.ts'), '--config', h.configPath, ...args],
    { cwd: repoRoot, env: { ...process.env, RATCHET_CRASH_AT: crashAt }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exit = await new Promise<NodeJS.Signals | null>((resolveExit) =>
    child.once('exit', (_code, signal) => resolveExit(signal)),
  );
  process.removeListener('exit', killOnExit);
  expect(exit, output).toBe('SIGKILL');
  expect(output).toContain(`crash point ${crashAt} reached`);
}

/** Chat and events of a session with the given ids (random in each run) named by their role. */
async function normalized(h: Harness, sessionId: string, names: Record<string, string>) {
  const rename = <T>(value: T): T => {
    let text = JSON.stringify(value);
    for (const [id, name] of Object.entries(names)) text = text.replaceAll(id, name);
    return JSON.parse(text) as T;
  };
  const chat = await h.transcript(sessionId);
  const events = await h.events(sessionId);
  expect(new Set(chat.map((message) => message.id)).size).toBe(chat.length);
  return {
    chat: normalizeTranscript(rename<Message[]>(chat), 'RUN'),
    // The outage's backoffs are jittered: the same in kind, not in length.
    events: normalizeEvents(rename<RatchetEvent[]>(events), 'RUN').map((event) =>
      event.replace(/"retry_in_ms":\d+/, '"retry_in_ms":"R"'),
    ),
  };
}

/** The retry of a run failed by the outage, by `retry`; then a worker finishes it. */
async function outageRetried(retry: (h: Harness, runId: string) => Promise<string>) {
  const h = start({ script: outage });
  const { runId, sessionId } = await failedByOutage(h);
  const retryId = await retry(h, runId);
  await h.startWorker();
  const done = await h.engine.waitForRun(retryId, { timeoutMs: 30_000 });
  expect(done.status).toBe('completed');
  const result = {
    ...(await normalized(h, sessionId, { [runId]: 'ORIGINAL', [retryId]: 'RETRY', [sessionId]: 'SESSION' })),
    calls: calls(h).length,
  };
  await h.close();
  harness = undefined;
  return result;
}

/** The fork at iteration 2 of a finished five-iteration run, by `fork`; then a worker finishes it. */
async function forked(
  fork: (h: Harness, runId: string, sessionId: string) => Promise<{ runId: string; sessionId: string }>,
) {
  const h = start({ script: fiveIterations });
  const worker = await h.startWorker();
  const { runId, sessionId } = await h.engine.startRun({ input: 'count up' });
  expect((await h.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
  await worker.close(2000);
  const made = await fork(h, runId, sessionId);
  await h.startWorker();
  const done = await h.engine.waitForRun(made.runId, { timeoutMs: 30_000 });
  expect(done.status).toBe('completed');
  const names = {
    [runId]: 'ORIGINAL',
    [made.runId]: 'FORK',
    [sessionId]: 'SESSION',
    [made.sessionId]: 'FORKED',
  };
  const result = {
    original: await normalized(h, sessionId, names),
    fork: await normalized(h, made.sessionId, names),
    calls: calls(h).length,
  };
  await h.close();
  harness = undefined;
  return result;
}

/** The retry a client finds after its request died: the one the retried run names. */
async function retryAgain(h: Harness, runId: string): Promise<string> {
  try {
    return (await h.engine.retryRun(runId)).runId;
  } catch (error) {
    if (!(error instanceof RatchetError) || error.code !== 'run_not_retryable') throw error;
    const named = error.details?.retry_run_id;
    expect(typeof named).toBe('string');
    return named as string;
  }
}

/** The fork a client finds after its request died: announced in the original's log, else made again. */
async function forkAgain(h: Harness, runId: string, sessionId: string) {
  const announced = (await h.events(sessionId)).filter((event) => event.kind === 'run_forked');
  expect(announced.length).toBeLessThanOrEqual(1);
  const event = announced[0];
  if (event?.kind === 'run_forked') return { runId: event.run_id, sessionId: event.data.fork_session_id };
  return h.engine.forkRun(runId, { atIteration: 2 });
}

describe('fork of a compacted chat', () => {
  it("copies the chat's summary with it: the fork asks for no summary again and sends what the original sent", async () => {
    const big = (label: string) => ({
      text: `fetching ${label}`,
      tool_calls: [{ name: 'big_result', arguments: { label, size: 1000 } }],
    });
    const h = start({
      script: {
        replies: [...Array.from({ length: 8 }, (_, index) => big(`r${index}`)), { text: 'finished' }],
        summary: { text: 'SUMMARY: results fetched so far' },
      },
      maxIterations: 30,
      provider: { context_window: 4000 },
      agent: { effects: [{ kind: 'compact', params: { threshold: 0.5 } }] },
    });
    await h.startWorker();
    const { runId } = await h.engine.startRun({ input: 'do the task' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const original = h.modelCalls();
    expect(original.some((call) => call.purpose === 'summary')).toBe(true);
    const lastRequest = original.filter((call) => call.purpose === undefined).at(-1);

    const fork = await h.engine.forkRun(runId, { atIteration: 8 });
    expect((await h.engine.waitForRun(fork.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const forked = h.modelCalls().slice(original.length);
    expect(forked.map((call) => [call.run_id, call.purpose ?? 'agent'])).toEqual([[fork.runId, 'agent']]);
    expect(forked[0]?.messages.map((message) => message.text)).toEqual(
      lastRequest?.messages.map((message) => message.text),
    );
  });
});

describe('retry and fork under SIGKILL of the process that makes them', () => {
  it.each(['steer.before_retry_commit', 'steer.after_retry_commit'])(
    'a retry killed at %s ends as the retry without a fault',
    async (point) => {
      const reference = await outageRetried(async (h, runId) => (await h.engine.retryRun(runId)).runId);
      const faulted = await outageRetried(async (h, runId) => {
        await steerAndDie(h, point, ['retry', runId]);
        return retryAgain(h, runId);
      });
      expect(faulted).toEqual(reference);
    },
  );

  it.each(['steer.before_fork_commit', 'steer.after_fork_commit'])(
    'a fork killed at %s ends as the fork without a fault',
    async (point) => {
      const reference = await forked((h, runId) => h.engine.forkRun(runId, { atIteration: 2 }));
      const faulted = await forked(async (h, runId, sessionId) => {
        await steerAndDie(h, point, ['fork', runId, '2']);
        return forkAgain(h, runId, sessionId);
      });
      expect(faulted).toEqual(reference);
    },
  );
});
