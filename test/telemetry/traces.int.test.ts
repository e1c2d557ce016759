import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiHarness } from '../api/api-harness.js';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import { type OwnRedis, startRedisServer } from '../helpers/find-redis.js';
import { Harness, type HarnessAgent, type WorkerProcess } from '../helpers/harness.js';
import { modelCallCounted } from '../helpers/journal-entry.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

/**
 * One run is one trace (decision 0024): a lead calls a tool, then delegates to a helper whose model call is
 * slow; the worker process holding that call is SIGKILLed mid-call and the other takes it over. Every span
 * the workers export reaches the OTLP receiver in this process.
 */
const agents: HarnessAgent[] = [
  {
    name: 'lead',
    script: {
      replies: [
        {
          tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }],
          usage: { input_tokens: 11, output_tokens: 7 },
        },
        { tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'help me' } }] },
        { text: 'all done' },
      ],
    },
  },
  // Long enough for the test to see the helper's call arrive and kill its worker on a loaded machine: a call
  // that finished first would leave no repeated call to find (it did at 2.5 s, with four test files at once).
  { name: 'helper', script: { default: { text: 'helped', delay_ms: 8_000 } } },
];

const byName = (spans: readonly ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);

describe('traces', () => {
  let harness: Harness | undefined;
  let receiver: OtlpReceiver | undefined;
  let api: ApiHarness | undefined;

  let ownRedis: OwnRedis | undefined;
  let redisDir: string | undefined;

  afterEach(async () => {
    await api?.close();
    api = undefined;
    await harness?.close();
    await ownRedis?.stop();
    ownRedis = undefined;
    if (redisDir) rmSync(redisDir, { recursive: true, force: true });
    redisDir = undefined;
    await receiver?.close();
    harness = undefined;
    receiver = undefined;
  });

  it('a run with a tool loop and a delegation, its helper SIGKILLed mid-model-call, is one trace', async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    const spans = receiver.spans;
    harness = new Harness({
      agents,
      config: {
        telemetry: {
          traces: {
            enabled: true,
            endpoint: receiver.url,
            headers: { authorization: 'Bearer otlp-token-0123456789' },
            export_delay_ms: 50,
          },
        },
      },
    });
    const workers: WorkerProcess[] = [harness.spawnWorker(), harness.spawnWorker()];
    const { runId, sessionId } = await harness.engine.startRun({ input: 'add and delegate' });

    // The lead's first two model calls and its tool call are exported before the kill.
    await waitFor(
      () =>
        spans.filter((span) => span.name === 'chat test' && span.attributes['gen_ai.agent.name'] === 'lead')
          .length >= 2 && byName(spans, 'execute_tool add').length === 1,
      30_000,
      'the spans of the lead before its delegation',
    );
    // The helper's model call is in flight (the scripted model logs a request when it arrives).
    await waitFor(
      () => harness?.modelCalls().some((call) => call.agent === 'helper') ?? false,
      30_000,
      "the helper's model call",
    );
    const helperCall = harness.modelCalls().find((call) => call.agent === 'helper');
    // ... and counted in the helper run's journal, which is how the takeover knows it is repeating one.
    await waitFor(
      () =>
        modelCallCounted(harness as Harness, sessionId, helperCall?.run_id ?? '', helperCall?.iteration ?? 1),
      30_000,
      "the helper's model call counted",
    );
    const doomed = workers.find((worker) => worker.child.pid === helperCall?.pid);
    expect(doomed, 'the helper call is made by one of the two worker processes').toBeDefined();
    await doomed?.kill();
    const exit = await waitForExit(doomed as WorkerProcess, 10_000);
    expect(exit.signal).toBe('SIGKILL');

    const run = await harness.engine.waitForRun(runId, { timeoutMs: 45_000 });
    expect(run.status).toBe('completed');
    await waitFor(
      () => byName(spans, 'invoke_agent lead').length === 1,
      30_000,
      "the lead's invoke_agent span",
    );
    const survivor = workers.find((worker) => worker !== doomed) as WorkerProcess;
    const stopped = await survivor.stop();
    expect(stopped.code, survivor.output()).toBe(0);

    // One trace.
    const traceIds = new Set(spans.map((span) => span.traceId));
    expect(traceIds.size, JSON.stringify(spans.map((span) => span.name))).toBe(1);
    // No span twice.
    expect(new Set(spans.map((span) => span.spanId)).size).toBe(spans.length);

    const [leadRun] = byName(spans, 'invoke_agent lead');
    const [helperRun] = byName(spans, 'invoke_agent helper');
    const [addTool] = byName(spans, 'execute_tool add');
    const [delegation] = byName(spans, 'execute_tool delegate_to_agent');
    for (const span of [leadRun, helperRun, addTool, delegation]) expect(span).toBeDefined();
    if (!leadRun || !helperRun || !addTool || !delegation) return;
    expect(byName(spans, 'invoke_agent helper')).toHaveLength(1);
    expect(byName(spans, 'execute_tool delegate_to_agent')).toHaveLength(1);

    // Structure: the lead's calls under its run; the helper's run under the lead's delegation call.
    expect(leadRun.parentSpanId).toBeUndefined();
    const chats = byName(spans, 'chat test');
    const leadChats = chats.filter((span) => span.attributes['gen_ai.agent.name'] === 'lead');
    const helperChats = chats.filter((span) => span.attributes['gen_ai.agent.name'] === 'helper');
    expect(leadChats.map((span) => span.attributes['ratchet.iteration']).sort()).toEqual([1, 2, 3]);
    for (const span of [...leadChats, addTool, delegation]) expect(span.parentSpanId).toBe(leadRun.spanId);
    expect(helperRun.parentSpanId).toBe(delegation.spanId);
    // The helper's call died with its worker: the survivor's call is the one span, marked as a repeat.
    expect(helperChats).toHaveLength(1);
    const [repeated] = helperChats;
    expect(repeated?.parentSpanId).toBe(helperRun.spanId);
    expect(repeated?.attributes['ratchet.repeat']).toBe(true);
    expect(repeated?.attributes['ratchet.repeat.cause']).toBe('takeover');
    expect(repeated?.events.map((event) => event.name)).toContain('ratchet.repeat');
    expect(repeated?.resource['service.instance.id']).toBeDefined();
    for (const span of leadChats) expect(span.attributes['ratchet.repeat']).toBeUndefined();
    // The delegation spans the child's whole run.
    expect(delegation.startMs).toBeLessThanOrEqual(helperRun.startMs);
    expect(delegation.endMs).toBeGreaterThanOrEqual(helperRun.endMs);

    // The GenAI attributes.
    const [firstChat] = leadChats.filter((span) => span.attributes['ratchet.iteration'] === 1);
    expect(firstChat?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.agent.name': 'lead',
      'gen_ai.agent.id': runId,
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'test',
      'gen_ai.response.model': 'test',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 7,
    });
    expect(firstChat?.kind).toBe(3); // CLIENT
    expect(addTool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'add',
      'gen_ai.agent.id': runId,
    });
    expect(addTool.attributes['gen_ai.tool.call.id']).toEqual(expect.any(String));
    expect(leadRun.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'lead',
      'gen_ai.agent.id': runId,
      'ratchet.run.status': 'completed',
    });
    expect(helperRun.attributes['gen_ai.agent.name']).toBe('helper');
    // Content is not captured unless asked for.
    for (const span of spans) {
      expect(span.attributes['gen_ai.input.messages']).toBeUndefined();
      expect(span.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    }
    // The exporter sent the configured headers; the pinned conventions name the scope.
    expect(receiver.requestHeaders[0]?.authorization).toBe('Bearer otlp-token-0123456789');
    expect(leadRun.scope).toMatchObject({ name: 'ratchet', version: '1.37.0' });
    // Log lines of the run's steps carry its trace.
    expect(survivor.output()).toContain(`"trace_id":"${leadRun.traceId}"`);
  }, 120_000);

  it('a step whose commit was recorded before its worker died emits no span when it runs again', async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    const spans = receiver.spans;
    harness = new Harness({
      script: {
        replies: [{ tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three' }],
      },
      config: { telemetry: { traces: { enabled: true, endpoint: receiver.url, export_delay_ms: 50 } } },
    });
    const { runId } = await harness.engine.startRun({ input: 'add' });
    // The first iteration's reply is committed, then its worker dies before the step completes.
    const doomed = harness.spawnWorker({ crashAt: 'iteration.after_commit@1' });
    expect((await waitForExit(doomed, 30_000)).signal).toBe('SIGKILL');
    const rescuer = harness.spawnWorker();
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 45_000 });
    expect(run.status).toBe('completed');
    await waitFor(() => byName(spans, 'invoke_agent agent').length === 1, 30_000, 'the run span');
    expect((await rescuer.stop()).code).toBe(0);
    // The rescuer ran iteration 1 again and found its reply recorded: no model call, no span of its own.
    const rescuerPid = rescuer.child.pid;
    const chats = byName(spans, 'chat test');
    const iterationOne = chats.filter((span) => span.attributes['ratchet.iteration'] === 1);
    expect(iterationOne.filter((span) => span.resource['process.pid'] === rescuerPid)).toEqual([]);
    expect(iterationOne.length).toBeLessThanOrEqual(1);
    // Its later work is traced, once, in the same trace.
    const iterationTwo = chats.filter((span) => span.attributes['ratchet.iteration'] === 2);
    expect(iterationTwo).toHaveLength(1);
    expect(iterationTwo[0]?.resource['process.pid']).toBe(rescuerPid);
    expect(byName(spans, 'execute_tool add')).toHaveLength(1);
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    expect(new Set(spans.map((span) => span.spanId)).size).toBe(spans.length);
    expect(harness.modelCalls()).toHaveLength(2);
  }, 120_000);

  it('captures message content when asked, with the secrets a hostile model repeats redacted', async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    const spans = receiver.spans;
    const secret = 'otlp-secret-token-5f2c9a7e1b3d';
    // The model repeats a secret it was handed (in the tool's arguments and its answer): hostile output.
    harness = new Harness({
      script: {
        replies: [
          { tool_calls: [{ name: 'add', arguments: { a: 1, b: 2, note: secret } }] },
          { text: `the token is ${secret}` },
        ],
      },
      config: {
        telemetry: {
          traces: {
            enabled: true,
            endpoint: receiver.url,
            export_delay_ms: 50,
            headers: { 'x-api-key': secret },
            capture_message_content: true,
          },
        },
      },
    });
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: `remember ${secret}` });
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    await waitFor(() => byName(spans, 'invoke_agent agent').length === 1, 30_000, 'the run span');
    const chats = byName(spans, 'chat test');
    expect(chats).toHaveLength(2);
    const captured = JSON.stringify(spans.map((span) => span.attributes));
    expect(captured).not.toContain(secret);
    expect(captured).toContain('[redacted]');
    const [tool] = byName(spans, 'execute_tool add');
    expect(String(tool?.attributes['gen_ai.tool.call.arguments'])).toContain('"a":1');
    expect(tool?.attributes['gen_ai.tool.call.result']).toEqual(expect.any(String));
    const last = chats.find((span) => span.attributes['ratchet.iteration'] === 2);
    expect(JSON.parse(String(last?.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'the token is [redacted]' }] },
    ]);
    expect(String(last?.attributes['gen_ai.input.messages'])).toContain('tool_call_response');
  }, 60_000);

  it('is off unless configured; the standard OTEL_* variables turn it on and set the endpoint', async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    const spans = receiver.spans;
    harness = new Harness({ script: { default: { text: 'ok' } } });
    const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' };
    // An endpoint alone turns nothing on: the worker stops (flushing what it has) and nothing arrived.
    const quiet = harness.spawnWorker({ env });
    const first = await harness.engine.startRun({ input: 'one' });
    expect((await harness.engine.waitForRun(first.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect((await quiet.stop()).code).toBe(0);
    expect(spans).toEqual([]);
    expect(receiver.requestHeaders).toEqual([]);
    // OTEL_TRACES_EXPORTER=otlp turns traces on, with OTEL_SERVICE_NAME; OTEL_SDK_DISABLED wins over both.
    const traced = harness.spawnWorker({
      env: { ...env, OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'ratchet-test' },
    });
    const second = await harness.engine.startRun({ input: 'two' });
    expect((await harness.engine.waitForRun(second.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    await waitFor(() => byName(spans, 'invoke_agent agent').length === 1, 30_000, 'the run span');
    expect(spans[0]?.resource['service.name']).toBe('ratchet-test');
    expect(new Set(spans.map((span) => span.attributes['gen_ai.agent.id']))).toEqual(new Set([second.runId]));
    expect((await traced.stop()).code).toBe(0);
    const count = spans.length;
    const disabled = harness.spawnWorker({
      env: { ...env, OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' },
    });
    const third = await harness.engine.startRun({ input: 'three' });
    expect((await harness.engine.waitForRun(third.runId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect((await disabled.stop()).code).toBe(0);
    expect(spans).toHaveLength(count);
  }, 90_000);

  it("puts API requests in their caller's trace, linked to the run they submit or answer", async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    const spans = receiver.spans;
    api = await ApiHarness.start({
      script: {
        rules: [
          {
            when: { role: 'user', contains: 'colour' },
            reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
          },
        ],
        default: { text: 'done' },
      },
      harness: {
        config: { telemetry: { traces: { enabled: true, endpoint: receiver.url, export_delay_ms: 50 } } },
      },
    });
    const submitter = { trace: '4bf92f3577b34da6a3ce929d0e0e4736', span: '00f067aa0ba902b7' };
    const submitted = await api.request('POST', '/v1/runs', {
      body: { input: 'pick a colour' },
      headers: { traceparent: `00-${submitter.trace}-${submitter.span}-01` },
    });
    expect(submitted.status).toBe(202);
    const runId = submitted.body.run_id as string;
    const questionId = await api.pendingQuestion(runId);
    const answerer = { trace: 'aaf92f3577b34da6a3ce929d0e0e4799', span: '11f067aa0ba902b8' };
    const answered = await api.request('POST', `/v1/sessions/${submitted.body.session_id}/respond`, {
      body: { question_id: questionId, response: 'red' },
      headers: { traceparent: `00-${answerer.trace}-${answerer.span}-01` },
    });
    expect(answered.status).toBe(202);
    expect((await api.engine.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('completed');
    expect((await api.request('GET', `/v1/runs/${runId}`)).status).toBe(200);
    await waitFor(
      () =>
        byName(spans, 'invoke_agent agent').length === 1 &&
        byName(spans, 'POST /v1/sessions/:id/respond').length === 1 &&
        byName(spans, 'GET /v1/runs/:id').length === 1,
      30_000,
      'the run and request spans',
    );
    const [run] = byName(spans, 'invoke_agent agent');
    const [submit] = byName(spans, 'POST /v1/runs');
    const [answer] = byName(spans, 'POST /v1/sessions/:id/respond');
    const [read] = byName(spans, 'GET /v1/runs/:id');
    expect(submit).toMatchObject({ traceId: submitter.trace, parentSpanId: submitter.span, kind: 2 });
    expect(submit?.links).toEqual([{ traceId: run?.traceId, spanId: run?.spanId }]);
    expect(submit?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/runs',
      'http.response.status_code': 202,
      'ratchet.run.id': runId,
    });
    expect(answer).toMatchObject({ traceId: answerer.trace, parentSpanId: answerer.span });
    expect(answer?.links).toEqual([{ traceId: run?.traceId, spanId: run?.spanId }]);
    // A request without a traceparent starts a trace of its own; a read links to nothing.
    expect(read?.parentSpanId).toBeUndefined();
    expect(read?.traceId).not.toBe(submitter.trace);
    expect(read?.attributes['url.path']).toBe(`/v1/runs/${runId}`);
  }, 60_000);

  it('keeps a run in one trace across a restart of its Redis mid-model-call', async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    const spans = receiver.spans;
    redisDir = mkdtempSync(join(tmpdir(), 'ratchet-trace-aof-'));
    ownRedis = await startRedisServer({ appendOnly: true, dir: redisDir });
    harness = new Harness({
      script: {
        replies: [
          { tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }], delay_ms: 800 },
          { tool_calls: [{ name: 'add', arguments: { a: 3, b: 4 } }] },
          { text: 'done' },
        ],
      },
      redisUrl: ownRedis.url,
      config: { telemetry: { traces: { enabled: true, endpoint: receiver.url, export_delay_ms: 50 } } },
    });
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: 'blip' });
    await waitFor(() => harness?.modelCalls().length === 1, 20_000, 'the first model call');
    // Redis dies while the model call is in flight, and comes back with its append-only file.
    await ownRedis.stop();
    ownRedis = await startRedisServer({ appendOnly: true, dir: redisDir, port: ownRedis.port });
    expect((await harness.engine.waitForRun(runId, { timeoutMs: 60_000 })).status).toBe('completed');
    await waitFor(() => byName(spans, 'invoke_agent agent').length === 1, 30_000, 'the run span');
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    expect(new Set(spans.map((span) => span.spanId)).size).toBe(spans.length);
    const [run] = byName(spans, 'invoke_agent agent');
    for (const span of spans.filter((candidate) => candidate !== run))
      expect(span.parentSpanId).toBe(run?.spanId);
    expect(byName(spans, 'execute_tool add')).toHaveLength(2);
    // Each iteration's call has one span, and any call made again (had the restart cost the step its lock)
    // is a span of its own, marked.
    for (const iteration of [1, 2, 3]) {
      const calls = byName(spans, 'chat test').filter(
        (span) => span.attributes['ratchet.iteration'] === iteration,
      );
      expect(
        calls.filter((span) => span.attributes['ratchet.repeat'] !== true),
        `iteration ${iteration}`,
      ).toHaveLength(1);
    }
  }, 90_000);
});
