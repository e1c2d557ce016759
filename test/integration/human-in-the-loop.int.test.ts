import { afterEach, describe, expect, it } from 'vitest';
import { textOf, toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const askScript: Script = {
  replies: [
    {
      text: 'one question first',
      tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } }],
    },
    { text: 'thanks' },
  ],
};

async function pendingRun(h: Harness, runId: string) {
  await waitFor(
    async () => (await h.engine.getRun(runId))?.status === 'waiting_input',
    20_000,
    'the question',
  );
  const run = await h.engine.getRun(runId);
  if (!run?.pending_question) throw new Error('no pending question');
  return run;
}

describe('ask_user', () => {
  it('parks the run waiting for input, and the answer resumes it', async () => {
    harness = new Harness({ script: askScript });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'paint it' });
    const waiting = await pendingRun(harness, runId);
    expect(waiting.pending_question).toMatchObject({
      kind: 'ask_user',
      question: 'Which colour?',
      options: ['red', 'blue'],
    });
    const questions = await harness.engine.listQuestions(sessionId);
    expect(questions.map((question) => question.id)).toEqual([waiting.pending_question?.id]);
    // No worker slot is held: the step is parked in the delayed set.
    const jobState = await harness.engine.queues.queue(0).getJobState(waiting.pending_question?.job_id ?? '');
    expect(jobState).toBe('delayed');

    await harness.engine.respond(sessionId, waiting.pending_question?.id ?? '', 'blue');
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    const chat = await harness.transcript(sessionId);
    expect(toolResultsOf(chat[2] ?? { parts: [] })[0]).toMatchObject({ content: 'blue', is_error: false });
    const kinds = (await harness.events(sessionId)).map((event) => event.kind);
    expect(kinds.filter((kind) => kind === 'ask_user')).toHaveLength(1);
    expect(kinds.filter((kind) => kind === 'question_answered')).toHaveLength(1);
    // Resumed after the answer, not interrupted by a crash.
    const end = (await harness.events(sessionId)).find((event) => event.kind === 'tool_call_end');
    expect(end?.kind === 'tool_call_end' && end.data.interrupted).toBeUndefined();
    expect(await harness.engine.listQuestions(sessionId)).toEqual([]);
  });

  it('refuses an unknown question (404) and a second answer (409)', async () => {
    harness = new Harness({ script: askScript });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'paint it' });
    const waiting = await pendingRun(harness, runId);
    const id = waiting.pending_question?.id ?? '';
    await expect(harness.engine.respond(sessionId, 'q-nope', 'red')).rejects.toMatchObject({
      code: 'question_not_found',
    });
    await expect(harness.engine.respond(sessionId, id, { decision: 'approve' })).rejects.toMatchObject({
      code: 'invalid_response',
    });
    await harness.engine.respond(sessionId, id, 'red');
    await expect(harness.engine.respond(sessionId, id, 'blue')).rejects.toMatchObject({
      code: 'question_closed',
    });
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
  });

  it('holds across a worker restart: answered while no worker runs, the next worker resumes', async () => {
    harness = new Harness({ script: askScript });
    const { runId, sessionId } = await harness.engine.startRun({ input: 'paint it' });
    const first = harness.spawnWorker();
    const waiting = await pendingRun(harness, runId);
    expect((await first.stop()).code).toBe(0);
    await harness.engine.respond(sessionId, waiting.pending_question?.id ?? '', 'red');
    const second = harness.spawnWorker();
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status, second.output()).toBe('completed');
    const chat = await harness.transcript(sessionId);
    expect(toolResultsOf(chat[2] ?? { parts: [] })[0]?.content).toBe('red');
  });

  it('takes the default answer when the timeout passes', async () => {
    harness = new Harness({
      script: {
        replies: [
          {
            tool_calls: [
              {
                name: 'ask_user',
                arguments: { question: 'Proceed?', timeout_s: 0.5, default: 'yes, by default' },
              },
            ],
          },
          { text: 'went ahead' },
        ],
      },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'go' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    const chat = await harness.transcript(sessionId);
    expect(toolResultsOf(chat[2] ?? { parts: [] })[0]?.content).toBe('yes, by default');
    const answered = (await harness.events(sessionId)).find((event) => event.kind === 'question_answered');
    expect(answered?.kind === 'question_answered' && answered.data.answered_by).toBe('timeout');
  });

  it('answers only the branch that asked when several questions are pending', async () => {
    harness = new Harness({
      script: {
        replies: [
          {
            tool_calls: [
              { name: 'ask_user', arguments: { question: 'First?' } },
              { name: 'ask_user', arguments: { question: 'Second?' } },
            ],
          },
          { text: 'both answered' },
        ],
      },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'ask twice' });
    await waitFor(
      async () => (await harness?.engine.listQuestions(sessionId))?.length === 2,
      20_000,
      'two questions',
    );
    const [first, second] = await harness.engine.listQuestions(sessionId);
    const byQuestion = new Map([first, second].map((question) => [question?.question, question?.id ?? '']));
    await harness.engine.respond(sessionId, byQuestion.get('Second?') ?? '', 'answer two');
    await waitFor(
      async () => (await harness?.engine.listQuestions(sessionId))?.length === 1,
      20_000,
      'one left',
    );
    expect((await harness.engine.getRun(runId))?.status).toBe('waiting_input');
    await harness.engine.respond(sessionId, byQuestion.get('First?') ?? '', 'answer one');
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const results = (await harness.transcript(sessionId)).filter((message) => message.role === 'tool');
    expect(results.map((message) => toolResultsOf(message)[0]?.content)).toEqual([
      'answer one',
      'answer two',
    ]);
  });
});

describe('tool approval', () => {
  const chargeScript: Script = {
    replies: [{ tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] }, { text: 'done' }],
  };
  const approvals = { tools: { charge_card: { requires_approval: true } } };

  async function approvalFor(h: Harness, runId: string) {
    const run = await pendingRun(h, runId);
    expect(run.pending_question).toMatchObject({
      kind: 'approval',
      tool: { name: 'charge_card', arguments: '{"amount":42}' },
    });
    // Nothing ran before the approval.
    expect(h.effects()).toEqual([]);
    return run.pending_question?.id ?? '';
  }

  it('runs the call once approved', async () => {
    harness = new Harness({ script: chargeScript, agent: approvals });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'charge' });
    await harness.engine.respond(sessionId, await approvalFor(harness, runId), 'approve');
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    expect(harness.effects().map((effect) => effect.label)).toEqual(['charge 42']);
  });

  it('gives the model the rejection and its reason', async () => {
    harness = new Harness({ script: chargeScript, agent: approvals });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'charge' });
    await harness.engine.respond(sessionId, await approvalFor(harness, runId), {
      decision: 'reject',
      reason: 'too much',
    });
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    expect(harness.effects()).toEqual([]);
    const result = toolResultsOf((await harness.transcript(sessionId))[2] ?? { parts: [] })[0];
    expect(result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/rejected by a person: too much/),
    });
  });

  it('runs with edited arguments, checked against the tool schema', async () => {
    harness = new Harness({ script: chargeScript, agent: approvals });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'charge' });
    const id = await approvalFor(harness, runId);
    await harness.engine.respond(sessionId, id, { decision: 'approve', arguments: { amount: 7 } });
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');
    expect(harness.effects().map((effect) => effect.label)).toEqual(['charge 7']);
  });
});

describe('cancellation', () => {
  it('aborts an in-flight model request and ends the run as cancelled', async () => {
    harness = new Harness({ script: { replies: [{ text: 'too slow', delay_ms: 20_000 }] } });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'slow' });
    await waitFor(() => harness?.modelCalls().length === 1, 20_000, 'the model call');
    const cancelled = await harness.engine.cancelRun(runId, 'changed my mind');
    expect(cancelled.status).toBe('cancelled');
    await expect(harness.engine.cancelRun(runId)).rejects.toMatchObject({ code: 'run_finished' });
    // The step gives up at once (no retry, no reply): the session is free for the next run.
    await waitFor(
      async () => (await harness?.engine.queues.queue(0).getActiveCount()) === 0,
      // Far less than the 20 s it would take unaborted; generous, as the machine may be busy.
      15_000,
      'the step to stop',
    );
    const events = await harness.events(sessionId);
    expect(events.map((event) => event.kind).slice(-2)).toEqual(['agent_end', 'run_cancelled']);
    expect(events.filter((event) => event.kind === 'message_added')).toHaveLength(1);
    expect((await harness.engine.getSession(sessionId))?.status).toBe('idle');
    expect(harness.modelCalls()).toHaveLength(1);
  });

  it('aborts an in-flight tool handler through its AbortSignal', async () => {
    harness = new Harness({
      script: {
        replies: [{ tool_calls: [{ name: 'slow_echo', arguments: { text: 'late', delay_ms: 20_000 } }] }],
      },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'slow tool' });
    await waitFor(
      async () =>
        (await harness?.events(sessionId))?.some((event) => event.kind === 'tool_call_start') ?? false,
      20_000,
      'the tool call',
    );
    await harness.engine.cancelRun(runId);
    await waitFor(
      async () => (await harness?.engine.queues.queue(0).getActiveCount()) === 0,
      // Far less than the 20 s it would take unaborted; generous, as the machine may be busy.
      15_000,
      'the tool to stop',
    );
    const events = await harness.events(sessionId);
    expect(events.filter((event) => event.kind === 'tool_call_end')).toHaveLength(0);
    expect((await harness.engine.getRun(runId))?.status).toBe('cancelled');
  });

  it('cancels a run waiting for an answer and closes its question', async () => {
    harness = new Harness({ script: askScript });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'paint it' });
    const waiting = await pendingRun(harness, runId);
    await harness.engine.cancelRun(runId);
    expect(await harness.engine.listQuestions(sessionId)).toEqual([]);
    await expect(
      harness.engine.respond(sessionId, waiting.pending_question?.id ?? '', 'red'),
    ).rejects.toMatchObject({
      code: 'question_closed',
    });
    expect((await harness.engine.getRun(runId))?.status).toBe('cancelled');
  });
});

describe('sessions and progress', () => {
  it('creates, reads and deletes a session with its data', async () => {
    harness = new Harness({ script: { replies: [{ text: 'hello' }] } });
    await harness.startWorker();
    const session = await harness.engine.createSession({ metadata: { user: 'ada' } });
    expect(session).toMatchObject({
      agent: 'agent',
      metadata: { user: 'ada' },
      status: 'idle',
      active_run_id: null,
    });
    const { runId } = await harness.engine.startRun({ input: 'hi', sessionId: session.id });
    await harness.engine.waitForRun(runId);
    expect(textOf((await harness.transcript(session.id))[1] ?? { parts: [] })).toBe('hello');
    expect(await harness.engine.deleteSession(session.id)).toBe(true);
    expect(await harness.engine.getSession(session.id)).toBeUndefined();
    expect(await harness.engine.getRun(runId)).toBeUndefined();
    expect(await harness.redis.keys(`${harness.prefix}:*session:${session.id}*`)).toEqual([]);
    expect(await harness.engine.deleteSession(session.id)).toBe(false);
    await expect(harness.engine.startRun({ input: 'x', sessionId: session.id })).rejects.toMatchObject({
      code: 'session_not_found',
    });
  });

  it('report_progress sets the run progress and adds a progress event', async () => {
    harness = new Harness({
      script: {
        replies: [
          { tool_calls: [{ name: 'report_progress', arguments: { message: 'half way', fraction: 0.5 } }] },
          { text: 'done' },
        ],
      },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'go' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.progress).toMatchObject({ fraction: 0.5, message: 'half way' });
    const progress = (await harness.events(sessionId)).filter((event) => event.kind === 'progress');
    expect(progress.map((event) => event.data)).toEqual([{ fraction: 0.5, message: 'half way' }]);
  });
});
