import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/crash-scenario.js';
import { callTool, connectClient, httpTransport } from '../mcp-server/mcp-client.js';
import { ApiHarness } from './api-harness.js';

/**
 * Scoped API tokens (decision 0035): a token `{token, tenant}` sees only its tenant's runs and sessions.
 * Every route the server registers (found as they are registered, so a new route is tried too) and every
 * MCP tool, given another tenant's ids, answers 404 (or the tool's not-found error), never 403.
 */

const operator = 'operator-token-0123456789';
const acme = 'acme-token-0123456789abcd';
const globex = 'globex-token-0123456789ab';

let api: ApiHarness | undefined;
let mcp: Client | undefined;
afterEach(async () => {
  await mcp?.close();
  mcp = undefined;
  await api?.close();
  api = undefined;
});

const script = {
  rules: [
    {
      when: { role: 'user' as const, contains: 'question' },
      reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
    },
  ],
  default: { text: 'done' },
};

interface Route {
  method: string;
  url: string;
}

async function start(): Promise<{ harness: ApiHarness; routes: Route[] }> {
  const routes: Route[] = [];
  api = await ApiHarness.start({
    script,
    api: { tokens: [operator, { token: acme, tenant: 'acme' }, { token: globex, tenant: 'globex' }] },
    onRoute: (route) => {
      for (const method of [route.method].flat()) routes.push({ method, url: route.url });
    },
  });
  return { harness: api, routes };
}

const as = (token: string) => ({ authorization: `Bearer ${token}` });

/** Globex's things: a finished run with its session, and a run waiting on a question. */
async function globexWorld(harness: ApiHarness) {
  const done = await harness.submitRun('write a poem', { headers: as(globex) });
  await harness.engine.waitForRun(done.runId, { timeoutMs: 30_000 });
  const asking = await harness.submitRun('ask a question', { headers: as(globex) });
  const questionId = await harness.pendingQuestion(asking.runId);
  const schedule = await harness.request('POST', '/v1/schedules', {
    body: { id: 'nightly-7', every_s: 86_400, agent: 'agent', input: 'the nightly report' },
    headers: as(globex),
  });
  expect(schedule.status, JSON.stringify(schedule.body)).toBeLessThan(300);
  return { done, asking, questionId, scheduleId: 'nightly-7' };
}

/** A body each mutating route accepts, so that the answer is about the id, not the body. */
function bodyFor(method: string, url: string, questionId: string): unknown {
  if (method === 'GET' || method === 'HEAD' || method === 'DELETE') return undefined;
  if (url.endsWith('/respond')) return { question_id: questionId, response: 'blue' };
  if (url.endsWith('/messages')) return { text: 'hello' };
  if (url.endsWith('/fork')) return { at_iteration: 1 };
  if (url.endsWith('/signal')) return { event: 'go' };
  return {};
}

describe('scoped API tokens', () => {
  it("every route with another tenant's id answers 404, and the operator's token reaches it", async () => {
    const { harness, routes } = await start();
    const world = await globexWorld(harness);
    const idFor = (url: string) => {
      if (url.includes('/runs/')) return world.done.runId;
      if (url.includes('/sessions/')) return world.asking.sessionId;
      if (url.includes('/questions/')) return world.questionId;
      if (url.includes('/agents/')) return 'agent';
      if (url.includes('/schedules/')) return world.scheduleId;
      // A webhook delivery of globex's session's first event.
      if (url.includes('/webhooks/deliveries/')) return `hook.${world.asking.sessionId}.1-0`;
      return 'unknown';
    };
    const withIds = routes.filter(
      (route) => route.url.startsWith('/v1/') && route.url.includes(':') && route.method !== 'HEAD',
    );
    // The routes of every resource are there (a sweep over nothing would prove nothing).
    expect(withIds.length).toBeGreaterThan(15);
    for (const route of withIds) {
      const path = route.url.replace(/:[a-z_]+/g, idFor(route.url));
      const sent = `${route.method} ${path}`;
      const body = bodyFor(route.method, route.url, world.questionId);
      const answer = await harness.request(
        route.method,
        `${path}${route.url.endsWith('/events') ? '?follow=false' : ''}`,
        {
          headers: as(acme),
          ...(body === undefined ? {} : { body }),
        },
      );
      expect(answer.status, `${sent} as acme: ${JSON.stringify(answer.body)}`).toBe(404);
      expect(answer.body.error.code, sent).toBe('not_found');
      expect(JSON.stringify(answer.body), sent).not.toContain('globex');
    }
    // The same ids are there for the operator (a read of each), so the 404s above were the scope.
    // (Not the event stream: the asking run is unfinished, so it would stay open.)
    const reads = withIds.filter(
      (candidate) => candidate.method === 'GET' && !candidate.url.endsWith('/events'),
    );
    for (const route of reads) {
      const path = route.url.replace(/:[a-z_]+/g, idFor(route.url));
      const query = route.url.endsWith('/events') ? '?follow=false' : '';
      const answer = await harness.request('GET', `${path}${query}`, { headers: as(operator) });
      expect(answer.status, `GET ${path} as operator`).not.toBe(404);
    }
    // Nothing was changed by acme's tries: globex's question is still pending, its session still there.
    const question = await harness.request('GET', `/v1/sessions/${world.asking.sessionId}/questions`, {
      headers: as(globex),
    });
    expect(question.body.questions.map((item: { id: string }) => item.id)).toEqual([world.questionId]);
  });

  it('lists, the inbox, the system view and the summary hold only the caller tenant’s', async () => {
    const { harness } = await start();
    const world = await globexWorld(harness);
    const mine = await harness.submitRun('acme work', { headers: as(acme) });
    await harness.engine.waitForRun(mine.runId, { timeoutMs: 30_000 });

    const runs = await harness.request('GET', '/v1/runs', { headers: as(acme) });
    expect(runs.body.runs.map((run: { id: string }) => run.id)).toEqual([mine.runId]);
    const sessions = await harness.request('GET', '/v1/sessions', { headers: as(acme) });
    expect(sessions.body.sessions.map((session: { id: string }) => session.id)).toEqual([mine.sessionId]);
    const inbox = await harness.request('GET', '/v1/questions', { headers: as(acme) });
    expect(inbox.body.questions).toEqual([]);
    const globexInbox = await harness.request('GET', '/v1/questions', { headers: as(globex) });
    expect(globexInbox.body.questions.map((item: { id: string }) => item.id)).toEqual([world.questionId]);
    const system = await harness.request('GET', '/v1/system', { headers: as(acme) });
    expect(system.status).toBe(200);
    expect(system.body.runs_by_status).toMatchObject({ completed: 1, waiting_input: 0 });
    expect(system.body.workers).toEqual([]);
    const operatorSystem = await harness.request('GET', '/v1/system', { headers: as(operator) });
    expect(operatorSystem.body.runs_by_status).toMatchObject({ completed: 2, waiting_input: 1 });
    const summary = await harness.request('GET', '/v1/runs/summary', { headers: as(globex) });
    expect(summary.status, JSON.stringify(summary.body)).toBe(200);
    expect(summary.body.counts).toMatchObject({ completed: 1, waiting_input: 1 });
    // The agents are the config's, for every token; their usage spans tenants, so a scoped token sees none.
    const agents = await harness.request('GET', '/v1/agents', { headers: as(acme) });
    expect(agents.status).toBe(200);
    expect(agents.body.agents[0]).toMatchObject({ name: 'agent', usage: { requests: 0 } });
    const operatorAgents = await harness.request('GET', '/v1/agents', { headers: as(operator) });
    expect(operatorAgents.body.agents[0].usage.requests).toBeGreaterThan(0);
    // The run records its tenant: the token's.
    const run = await harness.request('GET', `/v1/runs/${mine.runId}`, { headers: as(acme) });
    expect(run.body).toMatchObject({ tenant: 'acme', priority: 5 });
  });

  it('submits only as its tenant; an operator submits for any tenant; a session keeps its tenant', async () => {
    const { harness } = await start();
    const other = await harness.request('POST', '/v1/runs', {
      body: { input: 'x', tenant: 'globex' },
      headers: as(acme),
    });
    expect(other.status).toBe(400);
    expect(other.body.error.message).toContain('tenant');
    const own = await harness.request('POST', '/v1/runs', {
      body: { input: 'x', tenant: 'acme', priority: 9 },
      headers: as(acme),
    });
    expect(own.status).toBe(202);
    expect((await harness.engine.getRun(own.body.run_id))?.tenant).toBe('acme');
    expect((await harness.engine.getRun(own.body.run_id))?.priority).toBe(9);
    const forGlobex = await harness.request('POST', '/v1/runs', {
      body: { input: 'x', tenant: 'globex' },
      headers: as(operator),
    });
    expect(forGlobex.status).toBe(202);
    await harness.engine.waitForRun(forGlobex.body.run_id, { timeoutMs: 30_000 });
    // The operator's message to globex's session is globex's run.
    const message = await harness.request('POST', `/v1/sessions/${forGlobex.body.session_id}/messages`, {
      body: { text: 'more' },
      headers: as(operator),
    });
    expect(message.status).toBe(202);
    expect((await harness.engine.getRun(message.body.run_id))?.tenant).toBe('globex');
    // A session acme creates is acme's; globex cannot see it.
    const session = await harness.request('POST', '/v1/sessions', { body: {}, headers: as(acme) });
    expect(session.status).toBe(201);
    const seen = await harness.request('GET', `/v1/sessions/${session.body.id}`, { headers: as(globex) });
    expect(seen.status).toBe(404);
    // Idempotency keys are per tenant: globex's key of the same name starts globex's own run.
    const acmeKeyed = await harness.request('POST', '/v1/runs', {
      body: { input: 'y', idempotency_key: 'same-key' },
      headers: as(acme),
    });
    const globexKeyed = await harness.request('POST', '/v1/runs', {
      body: { input: 'y', idempotency_key: 'same-key' },
      headers: as(globex),
    });
    expect([acmeKeyed.status, globexKeyed.status]).toEqual([202, 202]);
    expect(acmeKeyed.body.run_id).not.toBe(globexKeyed.body.run_id);
    // Metrics count every tenant: not a scoped token's.
    const metrics = await harness.request('GET', '/metrics', { headers: as(acme) });
    expect(metrics.status).toBe(404);
  });

  it("every MCP tool given another tenant's ids answers not found", async () => {
    const { harness } = await start();
    const world = await globexWorld(harness);
    mcp = await connectClient(httpTransport(harness.url, acme));
    const { tools } = await mcp.listTools();
    const runId = world.done.runId;
    const sessionId = world.asking.sessionId;
    const argumentsOf: Record<string, Record<string, unknown>> = {
      get_run: { run_id: runId },
      get_run_steps: { run_id: runId },
      get_run_tree: { run_id: runId },
      wait_run: { run_id: runId, timeout_s: 1 },
      cancel_run: { run_id: world.asking.runId },
      retry_run: { run_id: runId },
      fork_run: { run_id: runId, at_iteration: 1 },
      respond: { run_id: world.asking.runId, answer: 'blue' },
      get_session_state: { session_id: sessionId },
      list_session_tasks: { session_id: sessionId },
      list_session_notes: { session_id: sessionId },
      submit_task: { input: 'x', session_id: sessionId },
      signal_run: { run_id: world.asking.runId, event: 'go' },
    };
    // send_event names no run: it reaches every tenant's, so a tenant's token is refused (below).
    const lists = ['list_runs', 'list_sessions', 'list_pending_questions', 'list_agents', 'send_event'];
    for (const tool of tools) {
      if (lists.includes(tool.name)) continue;
      const args = argumentsOf[tool.name];
      expect(args, `a call of MCP tool ${tool.name} with globex's ids`).toBeDefined();
      const outcome = await callTool(mcp, tool.name, args ?? {});
      expect(outcome.isError, `${tool.name}: ${outcome.text}`).toBe(true);
      expect(outcome.text, tool.name).toMatch(/not_found|unknown (run|session|question)/);
    }
    const listed = await callTool(mcp, 'list_runs', {});
    expect(JSON.stringify(listed.value)).not.toContain(runId);
    const sessions = await callTool(mcp, 'list_sessions', {});
    expect(JSON.stringify(sessions.value)).not.toContain(sessionId);
    const agents = await callTool(mcp, 'list_agents', {});
    expect(agents.isError, agents.text).toBe(false);
    // An operator-only action: forbidden (403) over MCP and HTTP alike, as /v1/mcp/toolboxes answers a
    // tenant, not the 400 of a malformed request.
    const event = await callTool(mcp, 'send_event', { event: 'go' });
    expect(event.isError, event.text).toBe(true);
    expect(event.text).toMatch(
      /^forbidden: events reach every tenant's runs: send them with an operator token/,
    );
    const posted = await harness.request('POST', '/v1/events', { body: { event: 'go' }, headers: as(acme) });
    expect(posted.status, JSON.stringify(posted.body)).toBe(403);
    expect(posted.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'operator_only' } });
    expect(posted.body.error.message).toContain('operator token');
    const byOperator = await harness.request('POST', '/v1/events', {
      body: { event: 'go' },
      headers: as(operator),
    });
    expect(byOperator.status, JSON.stringify(byOperator.body)).toBe(200);
    const pending = await callTool(mcp, 'list_pending_questions', {});
    expect(JSON.stringify(pending.value)).not.toContain(world.questionId);
    // Globex's question is still pending and its run still waiting.
    await waitFor(
      async () => (await harness.engine.getRun(world.asking.runId))?.status === 'waiting_input',
      10_000,
      'the asking run to wait still',
    );
  });
});
