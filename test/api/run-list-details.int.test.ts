import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, expect, it } from 'vitest';
import { engineFromConfig } from '../../src/engine/index.js';
import { createLogger } from '../../src/log/index.js';
import { runKeys } from '../../src/redis/keys.js';
import { callTool, connectClient, httpTransport } from '../mcp-server/mcp-client.js';
import { ApiHarness } from './api-harness.js';

// GET /v1/runs items carry what a runs table shows (iterations, usage, cost, times), read from the page's
// run records; a record that does not parse is listed with what the index knows, not a 500 for the page.

let api: ApiHarness | undefined;
let mcp: Client | undefined;
afterEach(async () => {
  await mcp?.close();
  mcp = undefined;
  await api?.close();
  api = undefined;
});

const usage = { input_tokens: 1000, output_tokens: 100 };

async function start(): Promise<ApiHarness> {
  api = await ApiHarness.start({
    script: {
      rules: [
        {
          when: { role: 'user', contains: 'question' },
          reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }], usage },
        },
        {
          when: { role: 'user', contains: 'add' },
          reply: { tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }], usage },
        },
      ],
      default: { text: 'done', usage },
    },
    // $2 per million input tokens, $10 per million output tokens: each request costs $0.003.
    harness: { config: { pricing: { test: { input: 2, output: 10 } } } },
  });
  return api;
}

it('lists iterations, usage, cost and times from each run record', async () => {
  const harness = await start();
  const adding = await harness.submitRun('please add');
  await harness.untilRunStatus(adding.runId, 'completed');
  const asking = await harness.submitRun('a question please');
  await harness.untilRunStatus(asking.runId, 'waiting_input');

  const listed = await harness.request('GET', '/v1/runs');
  expect(listed.status).toBe(200);
  const [waiting, completed] = listed.body.runs;
  const full = (await harness.request('GET', `/v1/runs/${adding.runId}`)).body;
  expect(completed).toEqual({
    id: adding.runId,
    session_id: adding.sessionId,
    agent: 'agent',
    status: 'completed',
    root_run_id: null,
    created_at: full.created_at,
    iterations: 2,
    usage: { input_tokens: 2000, output_tokens: 200, cached_input_tokens: 0, requests: 2 },
    cost_usd: full.cost_usd,
    started_at: expect.any(String),
    updated_at: expect.any(String),
    finished_at: full.finished_at,
    input_line: 'please add',
    // One computation with the run's own view (and its tree): finished_at minus created_at.
    duration_ms: full.duration_ms,
    // A root run with no runs below it: its tree's usage is its own.
    tree_usage: {
      input_tokens: 2000,
      output_tokens: 200,
      cached_input_tokens: 0,
      requests: 2,
      cost_usd: expect.closeTo(0.006, 10),
    },
    tenant: 'default',
    queued_reason: null,
  });
  expect(full.duration_ms).toBe(Date.parse(full.finished_at) - Date.parse(full.created_at));
  expect(full.input_line).toBe('please add');
  expect(completed.cost_usd).toBeCloseTo(0.006, 10);
  expect(Date.parse(completed.finished_at)).toBeGreaterThanOrEqual(Date.parse(completed.started_at));

  // Not finished: no finished_at, but what it has used so far.
  expect(waiting).toMatchObject({
    id: asking.runId,
    status: 'waiting_input',
    iterations: 1,
    usage: { input_tokens: 1000, output_tokens: 100, requests: 1 },
    finished_at: null,
  });
  expect(waiting.started_at).toEqual(expect.any(String));
  expect(waiting.cost_usd).toBeCloseTo(0.003, 10);

  // The MCP tool answers from the same request function: the same items.
  mcp = await connectClient(httpTransport(harness.url));
  const tool = await callTool(mcp, 'list_runs', {});
  expect(tool.isError).toBe(false);
  // (but for the duration of a run not finished, counted to the moment of each answer).
  const steady = (body: { runs: Record<string, unknown>[] }) => ({
    ...body,
    runs: body.runs.map((run) => ({ ...run, duration_ms: run.finished_at === null ? 0 : run.duration_ms })),
  });
  expect(steady(tool.value)).toEqual(steady((await harness.request('GET', '/v1/runs')).body));
});

it('lists a run whose record does not parse with what the index knows, and null for the rest', async () => {
  const harness = await start();
  const good = await harness.submitRun('hello');
  await harness.untilRunStatus(good.runId, 'completed');
  const broken = await harness.submitRun('hello again');
  await harness.untilRunStatus(broken.runId, 'completed');
  const mangled = await harness.submitRun('and again');
  await harness.untilRunStatus(mangled.runId, 'completed');

  // One record is not JSON at all, another is JSON that fails the record's schema.
  const { redis } = harness.harness;
  const space = harness.harness.engine.space;
  await redis.hset(runKeys(space, broken.sessionId, broken.runId).run, 'record', '{"v":1,"id":');
  const record = JSON.parse(
    (await redis.hget(runKeys(space, mangled.sessionId, mangled.runId).run, 'record')) ?? '{}',
  );
  await redis.hset(
    runKeys(space, mangled.sessionId, mangled.runId).run,
    'record',
    JSON.stringify({ ...record, iteration: 'many', usage: null }),
  );

  const listed = await harness.request('GET', '/v1/runs');
  expect(listed.status).toBe(200);
  expect(listed.body.runs.map((run: { id: string }) => run.id)).toEqual([
    mangled.runId,
    broken.runId,
    good.runId,
  ]);
  const unknown = {
    iterations: null,
    usage: null,
    cost_usd: null,
    started_at: null,
    updated_at: null,
    finished_at: null,
    input_line: null,
    duration_ms: null,
    tree_usage: null,
    tenant: null,
    queued_reason: null,
  };
  for (const [index, run] of [mangled, broken].entries())
    expect(listed.body.runs[index]).toEqual({
      id: run.runId,
      session_id: run.sessionId,
      agent: 'agent',
      status: 'completed',
      root_run_id: null,
      created_at: expect.any(String),
      ...unknown,
    });
  expect(listed.body.runs[2]).toMatchObject({ id: good.runId, iterations: 1, usage: { requests: 1 } });
  expect(listed.body.runs[2].finished_at).toEqual(expect.any(String));

  // The engine says which record it could not read (the API's own engine logs through the same call).
  const lines: string[] = [];
  const engine = engineFromConfig({
    config: harness.harness.loaded.config,
    redis,
    logger: createLogger({ level: 'warn', destination: { write: (line: string) => lines.push(line) } }),
  });
  try {
    await engine.listRuns({ limit: 10 });
  } finally {
    await engine.close();
  }
  const warned = lines.map((line) => JSON.parse(line)).filter((line) => line.level === 40);
  expect(warned.map((line) => line.run_id).sort()).toEqual([broken.runId, mangled.runId].sort());
  expect(warned.every((line) => line.msg === 'run record does not parse; listed without it')).toBe(true);

  // Filters and a page of one still answer; the broken run is found by its id too.
  const byId = await harness.request('GET', `/v1/runs?q=${broken.runId}`);
  expect(byId.status).toBe(200);
  expect(byId.body.runs).toEqual([expect.objectContaining({ id: broken.runId, ...unknown })]);
  const failedOnly = await harness.request('GET', '/v1/runs?status=completed&limit=1');
  expect(failedOnly.status).toBe(200);
  expect(failedOnly.body.runs).toHaveLength(1);
});

it('shows the first line of each input and finds runs by words of it, ignoring case; text is bounded', async () => {
  const harness = await start();
  const invoice = await harness.submitRun('\n  Summarise   the March INVOICES\nfor the finance team');
  const weather = await harness.submitRun('What is the weather in Lyon?');
  const long = await harness.submitRun(`Invoice ${'x'.repeat(300)}`);
  for (const run of [invoice, weather, long]) await harness.untilRunStatus(run.runId, 'completed');

  const listed = await harness.request('GET', '/v1/runs');
  const lineOf = (runId: string) =>
    listed.body.runs.find((run: { id: string }) => run.id === runId)?.input_line;
  // The first line with text, its spaces made one, cut to 200 characters with an ellipsis.
  expect(lineOf(invoice.runId)).toBe('Summarise the March INVOICES');
  expect(lineOf(weather.runId)).toBe('What is the weather in Lyon?');
  expect(lineOf(long.runId)).toHaveLength(200);
  expect(lineOf(long.runId)).toMatch(/^Invoice x+…$/);

  const search = async (text: string) =>
    (await harness.request('GET', `/v1/runs?text=${encodeURIComponent(text)}`)).body.runs.map(
      (run: { id: string }) => run.id,
    );
  expect(await search('invoice')).toEqual([long.runId, invoice.runId]);
  expect(await search('march invoices')).toEqual([invoice.runId]);
  expect(await search('LYON')).toEqual([weather.runId]);
  // Only the first line is kept: words of the second find nothing.
  expect(await search('finance team')).toEqual([]);
  // Combined with the other filters.
  const completedInvoices = await harness.request('GET', '/v1/runs?text=invoice&status=completed&limit=1');
  expect(completedInvoices.body.runs.map((run: { id: string }) => run.id)).toEqual([long.runId]);

  for (const text of ['', '   ', 'y'.repeat(201)]) {
    const refused = await harness.request('GET', `/v1/runs?text=${encodeURIComponent(text)}`);
    expect(refused.status, JSON.stringify(text)).toBe(400);
    const issue = refused.body.error.details.issues[0];
    expect(issue.path).toBe('text');
    expect(issue.message).toMatch(text.length > 200 ? /at most 200 characters/ : /at least one character/);
  }
});
