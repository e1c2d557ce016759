import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.js';
import { ApiHarness } from '../api/api-harness.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { freePort } from '../helpers/find-redis.js';
import { Harness } from '../helpers/harness.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
import { scrape } from './scrape.js';

const byName = (spans: readonly ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);

/** Every run asks a person first (an attacker-free script: the guards are not what is measured here). */
const askingScript = {
  rules: [
    {
      when: { role: 'user' as const, contains: 'colour' },
      reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
    },
  ],
  default: { text: 'done' },
};

describe('API telemetry', () => {
  let api: ApiHarness | undefined;
  let receiver: OtlpReceiver | undefined;
  let harness: Harness | undefined;

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await api?.close();
    await receiver?.close();
    api = undefined;
    receiver = undefined;
  });

  it('ends a run cancelled through the API once (span and count, cancel called twice) and times questions', async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    const spans = receiver.spans;
    api = await ApiHarness.start({
      script: askingScript,
      harness: {
        config: {
          telemetry: {
            traces: { enabled: true, endpoint: receiver.url, export_delay_ms: 50 },
            metrics: { enabled: true, worker_port: 0 },
          },
        },
      },
    });
    const metrics = () => scrape(`${api?.url}/metrics`);

    // A run answered: its question's wait is observed as answered.
    const answeredRun = await api.request('POST', '/v1/runs', { body: { input: 'pick a colour' } });
    const answeredId = answeredRun.body.run_id as string;
    const first = await api.pendingQuestion(answeredId);
    const respond = await api.request('POST', `/v1/sessions/${answeredRun.body.session_id}/respond`, {
      body: { question_id: first, response: 'red' },
    });
    expect(respond.status).toBe(202);
    expect((await api.engine.waitForRun(answeredId, { timeoutMs: 30_000 })).status).toBe('completed');

    // A run cancelled while its question waits, twice: one span, one count, one closed question.
    const cancelledRun = await api.request('POST', '/v1/runs', { body: { input: 'another colour' } });
    const cancelledId = cancelledRun.body.run_id as string;
    await api.pendingQuestion(cancelledId);
    await waitFor(
      async () =>
        (await metrics()).value('ratchet_question_oldest_pending_age_seconds', { kind: 'ask_user' }) > 0,
      30_000,
      'the pending question’s age',
    );
    const waiting = await metrics();
    expect(waiting.value('ratchet_question_oldest_pending_age_seconds', { kind: 'approval' })).toBe(0);
    const cancels = await Promise.all([
      api.request('POST', `/v1/runs/${cancelledId}/cancel`, { body: {} }),
      api.request('POST', `/v1/runs/${cancelledId}/cancel`, { body: {} }),
    ]);
    expect(cancels.map((response) => response.status).sort()).toEqual([202, 409]);
    const again = await api.request('POST', `/v1/runs/${cancelledId}/cancel`, { body: {} });
    expect(again.status).toBe(409);

    const after = await metrics();
    const agent = { agent: 'agent', status: 'cancelled' };
    expect(after.value('ratchet_runs_finished_total', agent)).toBe(1);
    expect(after.histogram('ratchet_run_duration_seconds', agent).count).toBe(1);
    const answered = after.histogram('ratchet_question_wait_seconds', {
      kind: 'ask_user',
      outcome: 'answered',
    });
    expect(answered.count).toBe(1);
    expect(answered.sum).toBeGreaterThan(0);
    const closed = after.histogram('ratchet_question_wait_seconds', {
      kind: 'ask_user',
      outcome: 'cancelled',
    });
    expect(closed.count).toBe(1);
    expect(after.value('ratchet_question_oldest_pending_age_seconds', { kind: 'ask_user' })).toBe(0);
    // Label values stay bounded: kinds, outcomes, agents, statuses; never a run or session id.
    expect(after.labelValues().filter((value) => value.includes('run_') || value.includes('ses_'))).toEqual(
      [],
    );

    await waitFor(
      () => byName(spans, 'invoke_agent agent').length === 2,
      30_000,
      'both runs’ invoke_agent spans',
    );
    const cancelledSpans = byName(spans, 'invoke_agent agent').filter(
      (span) => span.attributes['ratchet.run.id'] === cancelledId,
    );
    expect(cancelledSpans).toHaveLength(1);
    expect(cancelledSpans[0]?.attributes).toMatchObject({
      'ratchet.run.status': 'cancelled',
      'gen_ai.agent.id': cancelledId,
    });
    // The cancel that was accepted answers with the run: its request span links to the run's span.
    await waitFor(
      () => byName(spans, 'POST /v1/runs/:id/cancel').length === 3,
      30_000,
      'the cancel requests’ spans',
    );
    const linked = byName(spans, 'POST /v1/runs/:id/cancel').filter((span) => span.links.length > 0);
    expect(linked).toHaveLength(1);
    expect(linked[0]?.links).toEqual([
      { traceId: cancelledSpans[0]?.traceId, spanId: cancelledSpans[0]?.spanId },
    ]);
    // Give any duplicate a chance to arrive before asserting there is none.
    await api.close();
    api = undefined;
    expect(
      byName(spans, 'invoke_agent agent').filter((span) => span.attributes['ratchet.run.id'] === cancelledId),
    ).toHaveLength(1);
  }, 90_000);

  it('counts a question closed by its own timeout on the worker that closed it (outcome timed_out)', async () => {
    const workerPort = await freePort();
    api = await ApiHarness.start({
      script: {
        rules: [
          {
            when: { role: 'user' as const, contains: 'colour' },
            reply: {
              tool_calls: [
                {
                  name: 'ask_user',
                  arguments: { question: 'Which colour?', timeout_s: 0.5, default: 'blue, by default' },
                },
              ],
            },
          },
        ],
        default: { text: 'done' },
      },
      harness: { config: { telemetry: { metrics: { enabled: true, worker_port: workerPort } } } },
    });
    const submitted = await api.request('POST', '/v1/runs', { body: { input: 'pick a colour' } });
    const runId = submitted.body.run_id as string;
    expect((await api.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const worker = await scrape(`http://127.0.0.1:${workerPort}/metrics`);
    const timedOut = worker.histogram('ratchet_question_wait_seconds', {
      kind: 'ask_user',
      outcome: 'timed_out',
    });
    expect(timedOut.count).toBe(1);
    expect(timedOut.sum).toBeGreaterThanOrEqual(0.5);
    // The API saw no answer and no cancellation.
    const fromApi = await scrape(`${api.url}/metrics`);
    expect(
      fromApi.histogram('ratchet_question_wait_seconds', { kind: 'ask_user', outcome: 'answered' }).count,
    ).toBe(0);
  }, 60_000);

  it('puts the request span’s trace_id and span_id on the API’s log lines', async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    const spans = receiver.spans;
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    api = await ApiHarness.start({
      script: askingScript,
      logger: createLogger({ level: 'info', destination }),
      api: { tokens: ['log-test-token-0123456789'] },
      harness: {
        config: { telemetry: { traces: { enabled: true, endpoint: receiver.url, export_delay_ms: 50 } } },
      },
    });
    const caller = { trace: '5bf92f3577b34da6a3ce929d0e0e4736', span: '01f067aa0ba902b7' };
    const read = await api.request('GET', '/v1/runs?limit=1', {
      headers: {
        authorization: 'Bearer log-test-token-0123456789',
        traceparent: `00-${caller.trace}-${caller.span}-01`,
      },
    });
    expect(read.status).toBe(200);
    // A request refused by the token check is traced and logged with its span too.
    const refused = await api.request('GET', '/v1/runs');
    expect(refused.status).toBe(401);
    await waitFor(() => byName(spans, 'GET /v1/runs').length === 2, 30_000, 'the request spans');
    const [inTrace] = byName(spans, 'GET /v1/runs').filter((span) => span.traceId === caller.trace);
    expect(inTrace).toMatchObject({ parentSpanId: caller.span, kind: 2 });
    expect(inTrace?.attributes).toMatchObject({ 'http.response.status_code': 200, 'url.path': '/v1/runs' });
    const completed = lines.filter((line) => line.msg === 'request completed');
    expect(completed).toHaveLength(2);
    for (const line of completed) {
      const span = spans.find((candidate) => candidate.spanId === line.span_id);
      expect(span?.name).toBe('GET /v1/runs');
      expect(line.trace_id).toBe(span?.traceId);
    }
    expect(completed.map((line) => line.trace_id)).toContain(caller.trace);
    // The line a request starts with too, once each (Fastify's own, written before any hook, is off).
    const incoming = lines.filter((line) => line.msg === 'incoming request');
    expect(incoming).toHaveLength(2);
    expect(incoming.map((line) => line.span_id).sort()).toEqual(completed.map((line) => line.span_id).sort());

    // An event stream (a hijacked reply) has its span too, ended when the client goes away.
    const session = await api.request('POST', '/v1/sessions', {
      body: {},
      headers: { authorization: 'Bearer log-test-token-0123456789' },
    });
    const stream = new AbortController();
    const response = await fetch(`${api.url}/v1/sessions/${session.body.id}/events`, {
      headers: { authorization: 'Bearer log-test-token-0123456789', accept: 'text/event-stream' },
      signal: stream.signal,
    });
    expect(response.status).toBe(200);
    stream.abort();
    await waitFor(
      () => byName(spans, 'GET /v1/sessions/:id/events').length === 1,
      30_000,
      'the event stream’s span',
    );
    expect(byName(spans, 'GET /v1/sessions/:id/events')[0]?.attributes['http.response.status_code']).toBe(
      200,
    );
  }, 60_000);

  it('emits BullMQ’s queue spans for step jobs when asked, in or linked to the run’s trace, and none of its housekeeping', async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    const spans = receiver.spans;
    const queueSpans = receiver.queueSpans;
    api = await ApiHarness.start({
      script: {
        replies: [{ tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'five' }],
      },
      logger: createLogger({ level: process.env.DEBUG_TEST ? 'debug' : 'silent' }),
      harness: {
        config: {
          telemetry: {
            traces: { enabled: true, endpoint: receiver.url, export_delay_ms: 50, queue_spans: true },
          },
        },
      },
    });
    const submitted = await api.request('POST', '/v1/runs', { body: { input: 'add' } });
    const runId = submitted.body.run_id as string;
    expect((await api.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    await waitFor(() => byName(spans, 'invoke_agent agent').length === 1, 30_000, 'the run span');
    const [run] = byName(spans, 'invoke_agent agent');
    const ofRun = (span: ReceivedSpan) => span.attributes['ratchet.run.id'] === runId;
    // Three steps: iteration 1, the tool call, iteration 2.
    await waitFor(
      () => byName(queueSpans, 'process steps').filter(ofRun).length === 3,
      30_000,
      'process spans',
    );
    const processes = byName(queueSpans, 'process steps').filter(ofRun);
    for (const process of processes) {
      const inRunTrace = process.traceId === run?.traceId;
      const linked = process.links.some(
        (link) => link.spanId === run?.spanId && link.traceId === run?.traceId,
      );
      expect(inRunTrace || linked).toBe(true);
      expect(process.kind).toBe(5); // CONSUMER
    }
    // The steps a step adds are `add` spans under the run's span, and their `process` spans are their children.
    const adds = queueSpans.filter(
      (span) => span.name.startsWith('add steps.') && span.parentSpanId === run?.spanId,
    );
    expect(adds.length).toBeGreaterThanOrEqual(2);
    for (const add of adds) expect(add).toMatchObject({ traceId: run?.traceId, kind: 4 }); // PRODUCER
    const children = processes.filter((process) => adds.some((add) => add.spanId === process.parentSpanId));
    expect(children.length).toBeGreaterThanOrEqual(2);
    // The first step was written with its run (no `add`): its process span is linked, not a child.
    expect(processes.filter((process) => process.links.length > 0)).toHaveLength(1);
    expect(processes.filter((process) => process.traceId === run?.traceId)).toHaveLength(2);
    // BullMQ's work outside any step (fetching the next job, the stalled-job check) is not sent: every queue
    // span is in the run's trace or in the trace of the linked first `process` span.
    const traces = new Set([run?.traceId, ...processes.map((process) => process.traceId)]);
    const stray = queueSpans.filter((span) => !traces.has(span.traceId));
    expect(stray.map((span) => span.name)).toEqual([]);
  }, 60_000);

  it('ends a child run a worker cancels (a sibling failed) with its invoke_agent span, once', async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    const spans = receiver.spans;
    harness = new Harness({
      agents: [
        {
          name: 'lead',
          script: {
            rules: [{ when: { role: 'tool' }, reply: { text: 'one of them failed' } }],
            replies: [
              {
                tool_calls: [
                  {
                    name: 'spawn_agents',
                    arguments: {
                      tasks: [
                        { agent: 'sleeper', task: 'take your time' },
                        { agent: 'broken', task: 'fail' },
                      ],
                    },
                  },
                ],
              },
            ],
          },
        },
        { name: 'sleeper', script: { default: { text: 'late', delay_ms: 10_000 } } },
        { name: 'broken', script: { default: { fail: [{ kind: 'auth', message: 'bad key' }] } } },
      ],
      config: { telemetry: { traces: { enabled: true, endpoint: receiver.url, export_delay_ms: 50 } } },
    });
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: 'go' });
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    await waitFor(
      () => ['lead', 'sleeper', 'broken'].every((agent) => byName(spans, `invoke_agent ${agent}`).length > 0),
      30_000,
      'the three runs’ spans',
    );
    await harness.close();
    harness = undefined;
    const [lead] = byName(spans, 'invoke_agent lead');
    const sleeper = byName(spans, 'invoke_agent sleeper');
    expect(sleeper).toHaveLength(1);
    expect(sleeper[0]?.attributes['ratchet.run.status']).toBe('cancelled');
    expect(sleeper[0]?.traceId).toBe(lead?.traceId);
    const [spawn] = byName(spans, 'execute_tool spawn_agents');
    expect(sleeper[0]?.parentSpanId).toBe(spawn?.spanId);
  }, 60_000);

  it('sends no BullMQ spans unless telemetry.traces.queue_spans is on, the run spans still', async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    harness = new Harness({
      script: { replies: [{ tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three' }] },
      config: {
        telemetry: {
          traces: { enabled: true, endpoint: receiver.url, export_delay_ms: 50 },
        },
      },
    });
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: 'add' });
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    const spans = receiver.spans;
    await waitFor(() => byName(spans, 'invoke_agent agent').length === 1, 30_000, 'the run span');
    // A clean close sends whatever is still batched.
    await harness.close();
    harness = undefined;
    expect(byName(spans, 'execute_tool add')).toHaveLength(1);
    expect(receiver.queueSpans).toEqual([]);
  }, 60_000);
});
