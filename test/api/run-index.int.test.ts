import { afterEach, describe, expect, it } from 'vitest';
import { listRuns, listSessions } from '../../src/redis/run-index.js';
import { encodeCursor } from '../../src/wire/list-cursor.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { ApiHarness } from './api-harness.js';

// The run index (GET /v1/runs, /v1/runs/summary) and the sessions list (GET /v1/sessions) over real HTTP,
// a real worker and real Redis: every filter, the limits, and cursors that stay right while runs come and go.

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const leadScript = {
  rules: [
    {
      when: { role: 'user' as const, contains: 'delegate' },
      reply: { tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'find it' } }] },
    },
    {
      when: { role: 'user' as const, contains: 'question' },
      reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }] },
    },
    {
      when: { role: 'user' as const, contains: 'fail' },
      reply: { text: 'never', fail: [{ kind: 'auth' as const }] },
    },
    { when: { role: 'user' as const, contains: 'slow' }, reply: { text: 'slowly', delay_ms: 400 } },
  ],
  default: { text: 'done' },
};

async function start(): Promise<ApiHarness> {
  api = await ApiHarness.start({
    script: { default: { text: 'unused' } },
    harness: {
      agents: [
        { name: 'lead', script: leadScript },
        { name: 'helper', script: { default: { text: 'found it' } } },
      ],
    },
  });
  return api;
}

interface Listed {
  id: string;
  session_id: string;
  agent: string;
  status: string;
  root_run_id: string | null;
  created_at: string;
}

type UsageSums = { input_tokens: number; output_tokens: number };

/** An item with what the run's record and its tree add. */
interface ListedWithUsage extends Listed {
  usage: UsageSums | null;
  tree_usage: UsageSums | null;
  duration_ms: number | null;
}

async function submit(
  harness: ApiHarness,
  input: string,
  agent = 'lead',
): Promise<{ runId: string; sessionId: string }> {
  const submitted = await harness.request('POST', '/v1/runs', { body: { input, agent } });
  expect(submitted.status).toBe(202);
  return { runId: submitted.body.run_id, sessionId: submitted.body.session_id };
}

async function runStatus(harness: ApiHarness, runId: string): Promise<string> {
  return (await harness.request('GET', `/v1/runs/${runId}`)).body.status;
}

async function untilStatus(harness: ApiHarness, runId: string, status: string): Promise<void> {
  await waitFor(async () => (await runStatus(harness, runId)) === status, 20_000, `run ${runId} ${status}`);
}

async function list(
  harness: ApiHarness,
  query = '',
): Promise<{ runs: Listed[]; next_cursor: string | null }> {
  const response = await harness.request('GET', `/v1/runs${query === '' ? '' : `?${query}`}`);
  expect(response.status).toBe(200);
  return response.body;
}

const ids = (runs: readonly Listed[]) => runs.map((run) => run.id);

/** Newest first: by creation time, then by id, both descending. */
function isNewestFirst(runs: readonly Listed[]): boolean {
  return runs.every((run, index) => {
    const previous = runs[index - 1];
    if (!previous) return true;
    return (
      previous.created_at > run.created_at || (previous.created_at === run.created_at && previous.id > run.id)
    );
  });
}

/** Every page of a listing, following next_cursor. */
async function allPages(
  harness: ApiHarness,
  query: string,
  between?: () => Promise<void>,
): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const page = await list(harness, `${query}${cursor === null ? '' : `&cursor=${cursor}`}`);
    pages.push(ids(page.runs));
    cursor = page.next_cursor;
    await between?.();
  } while (cursor !== null && pages.length < 200);
  return pages;
}

describe('GET /v1/runs', () => {
  it('lists runs newest first, and filters by status, agent, session, root, creation time and id prefix', async () => {
    const harness = await start();
    const plain = await submit(harness, 'hello');
    await untilStatus(harness, plain.runId, 'completed');
    const delegating = await submit(harness, 'please delegate');
    await untilStatus(harness, delegating.runId, 'completed');
    const failing = await submit(harness, 'fail now');
    await untilStatus(harness, failing.runId, 'failed');
    const asking = await submit(harness, 'a question for you');
    await untilStatus(harness, asking.runId, 'waiting_input');
    const helper = await submit(harness, 'hello helper', 'helper');
    await untilStatus(harness, helper.runId, 'completed');

    const all = await list(harness);
    expect(all.next_cursor).toBeNull();
    expect(all.runs).toHaveLength(6);
    expect(isNewestFirst(all.runs)).toBe(true);
    const child = all.runs.find((run) => run.root_run_id !== null);
    if (!child) throw new Error('no child run listed');
    expect(child).toMatchObject({
      agent: 'helper',
      session_id: delegating.sessionId,
      root_run_id: delegating.runId,
    });
    // What the list says of a run is what the run says of itself.
    for (const listed of all.runs) {
      const run = (await harness.request('GET', `/v1/runs/${listed.id}`)).body;
      expect(listed).toEqual({
        id: run.id,
        session_id: run.session_id,
        agent: run.agent,
        status: run.status,
        root_run_id: listed.root_run_id,
        created_at: run.created_at,
        iterations: run.iterations,
        usage: run.usage,
        cost_usd: run.cost_usd,
        started_at: run.status === 'failed' ? null : expect.any(String),
        updated_at: expect.any(String),
        finished_at: run.finished_at,
        input_line: run.input_line,
        // Counted to now while a run is not finished: the two answers were a moment apart.
        duration_ms: run.finished_at === null ? expect.any(Number) : run.duration_ms,
        tree_usage: listed.root_run_id === null ? expect.any(Object) : null,
        tenant: run.tenant,
        // No admission configured: nothing waits for it.
        queued_reason: null,
      });
    }

    expect(ids((await list(harness, 'status=failed')).runs)).toEqual([failing.runId]);
    expect(ids((await list(harness, 'status=waiting_input')).runs)).toEqual([asking.runId]);
    const failedOrWaiting = [asking.runId, failing.runId];
    expect(ids((await list(harness, 'status=failed,waiting_input')).runs)).toEqual(failedOrWaiting);
    expect(ids((await list(harness, 'status=failed&status=waiting_input')).runs)).toEqual(failedOrWaiting);
    expect(ids((await list(harness, 'status=completed')).runs).sort()).toEqual(
      [plain.runId, delegating.runId, child.id, helper.runId].sort(),
    );
    expect(ids((await list(harness, 'agent=helper')).runs)).toEqual([helper.runId, child.id]);
    expect(ids((await list(harness, 'agent=helper&root=true')).runs)).toEqual([helper.runId]);
    expect(ids((await list(harness, 'root=false')).runs)).toEqual([child.id]);
    expect((await list(harness, 'root=true')).runs).toHaveLength(5);
    expect(ids((await list(harness, 'status=completed&agent=lead&root=true')).runs)).toEqual([
      delegating.runId,
      plain.runId,
    ]);
    expect(ids((await list(harness, `session_id=${delegating.sessionId}`)).runs)).toEqual([
      child.id,
      delegating.runId,
    ]);
    expect(ids((await list(harness, `session_id=${delegating.sessionId}&root=true`)).runs)).toEqual([
      delegating.runId,
    ]);
    expect(ids((await list(harness, `q=${failing.runId}`)).runs)).toEqual([failing.runId]);
    expect(ids((await list(harness, `q=${delegating.runId.slice(0, 21)}`)).runs)).toEqual([
      child.id,
      delegating.runId,
    ]);
    expect((await list(harness, 'agent=nobody')).runs).toEqual([]);

    const byId = new Map(all.runs.map((run) => [run.id, run]));
    const failingAt = byId.get(failing.runId)?.created_at ?? '';
    const since = (await list(harness, `since=${failingAt}`)).runs;
    expect(since.every((run) => run.created_at >= failingAt)).toBe(true);
    expect(ids(since)).toEqual(ids(all.runs.filter((run) => run.created_at >= failingAt)));
    expect(ids(since)).toContain(failing.runId);
    const until = (await list(harness, `until=${failingAt}`)).runs;
    expect(ids(until)).toEqual(ids(all.runs.filter((run) => run.created_at <= failingAt)));
    expect(ids(until)).toContain(failing.runId);
    expect(ids((await list(harness, `since=${failingAt}&until=${failingAt}`)).runs)).toEqual([failing.runId]);

    // The status follows the run: answered, the waiting run completes and leaves waiting_input.
    const summaryBefore = (await harness.request('GET', '/v1/runs/summary')).body;
    expect(summaryBefore).toEqual({
      counts: {
        queued: 0,
        running: 0,
        waiting: 0,
        waiting_input: 1,
        waiting_for_worker: 0,
        completed: 4,
        failed: 1,
        cancelled: 0,
      },
      total: 6,
      since: null,
    });
    const [question] = (await harness.request('GET', `/v1/sessions/${asking.sessionId}/questions`)).body
      .questions;
    const answered = await harness.request('POST', `/v1/sessions/${asking.sessionId}/respond`, {
      body: { question_id: question.id, response: 'that one' },
    });
    expect(answered.status).toBe(202);
    await untilStatus(harness, asking.runId, 'completed');
    expect((await list(harness, 'status=waiting_input')).runs).toEqual([]);
    expect(ids((await list(harness, 'status=completed')).runs)).toContain(asking.runId);
    const summary = await harness.request('GET', `/v1/runs/summary?since=${failingAt}`);
    expect(summary.status).toBe(200);
    expect(summary.body.counts).toMatchObject({ waiting_input: 0, failed: 1, completed: since.length - 1 });
    expect(summary.body.since).toBe(failingAt);

    // A cancelled run is listed cancelled.
    const slow = await submit(harness, 'slow one');
    expect((await harness.request('POST', `/v1/runs/${slow.runId}/cancel`, { body: {} })).status).toBe(202);
    expect((await list(harness, 'status=cancelled')).runs.map((run) => run.id)).toEqual([slow.runId]);
  });

  it('refuses a limit out of bounds and malformed filters with 400 naming the field', async () => {
    const harness = await start();
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=2.5', 'limit'],
      ['status=done', 'status'],
      ['status=failed,', 'status'],
      ['session_id=ses_x', 'session_id'],
      ['root=maybe', 'root'],
      ['since=yesterday', 'since'],
      ['until=2026-13-01T00:00:00Z', 'until'],
      ['q=RUN*', 'q'],
      ['text=', 'text'],
      [`text=${'a'.repeat(201)}`, 'text'],
      ['cursor=garbage', 'cursor'],
      [`cursor=${encodeCursor('sessions', `${'1'.repeat(13)}:ses_0000000000000000`)}`, 'cursor'],
      ['colour=blue', 'colour'],
    ];
    for (const [query, field] of cases) {
      const response = await harness.request('GET', `/v1/runs?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect(
        response.body.error.details.issues.map((issue: { path: string }) => issue.path),
        query,
      ).toContain(field);
    }
    expect((await harness.request('GET', '/v1/runs?limit=500')).status).toBe(200);
    expect((await harness.request('GET', '/v1/runs?limit=1')).status).toBe(200);
    const summary = await harness.request('GET', '/v1/runs/summary?since=an-hour-ago');
    expect(summary.status).toBe(400);
    expect(summary.body.error.details.issues[0].path).toBe('since');
  });

  it('pages with a cursor while runs are created and finished: no run that existed is missed or repeated', async () => {
    const harness = await start();
    const before: string[] = [];
    for (let index = 0; index < 12; index += 1) {
      // Half of them still running while the client pages.
      before.push((await submit(harness, index % 2 === 0 ? 'slow work' : 'hello')).runId);
    }
    const created: string[] = [];
    // From the first page on, a client keeps creating runs while this one pages (and earlier runs finish).
    let paging = true;
    let creating: Promise<void> | undefined;
    const createWhilePaging = async () => {
      while (paging) created.push((await submit(harness, 'slow work')).runId);
    };
    const pages = await allPages(harness, 'limit=3', async () => {
      creating ??= createWhilePaging();
      created.push((await submit(harness, 'slow work')).runId);
    });
    paging = false;
    await creating;
    expect(created.length).toBeGreaterThan(pages.length);
    const seen = pages.flat();
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => before.includes(id)).sort()).toEqual([...before].sort());
    // Runs created while paging are newer than the first page: none of them shows up later.
    expect(seen.filter((id) => created.includes(id))).toEqual([]);
    expect(pages.slice(0, -1).every((page) => page.length === 3)).toBe(true);

    // Paging a status while runs leave it and others enter it: each run is listed at most once.
    await Promise.all(created.map((runId) => untilStatus(harness, runId, 'completed')));
    const completed = (await allPages(harness, 'status=completed&limit=4')).flat();
    expect(new Set(completed).size).toBe(completed.length);
    expect(completed.sort()).toEqual([...before, ...created].sort());
  });

  it('a rare filter looks at a bounded number of runs per page, and following the cursor still finds them all', async () => {
    const harness = await start();
    const helpers: string[] = [];
    for (let index = 0; index < 9; index += 1) {
      const { runId } = await submit(harness, 'hello', index % 3 === 0 ? 'helper' : 'lead');
      if (index % 3 === 0) helpers.push(runId);
    }
    await Promise.all(helpers.map((runId) => untilStatus(harness, runId, 'completed')));
    const { redis } = harness.harness;
    const space = harness.harness.engine.space;
    // Two entries looked at per source: the pages are short, the cursor goes on from where each stopped.
    const found: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await listRuns(
        redis,
        space,
        { limit: 5, idPrefix: 'run_', root: true, ...(after ? { after } : {}) },
        2,
      );
      found.push(...page.runs.filter((run) => run.agent === 'helper').map((run) => run.id));
      pages += 1;
      if (page.next === null) break;
      after = page.next;
    }
    expect(pages).toBeGreaterThan(1);
    expect(found.sort()).toEqual([...helpers].sort());
    // A run id names its session: found on the first page, however few entries a page looks at.
    const oldest = helpers[0] ?? '';
    const byId = await listRuns(redis, space, { limit: 5, idPrefix: oldest }, 2);
    expect(byId).toEqual({ runs: [expect.objectContaining({ id: oldest, agent: 'helper' })], next: null });
    const direct = await listRuns(redis, space, { limit: 500, agent: 'helper' }, 2);
    expect(direct.runs).toHaveLength(2);
    expect(direct.next).not.toBeNull();
  });
});

describe('waiting_input through a tree', () => {
  it('lists a root run and its child waiting while the child asks, and neither once it is answered', async () => {
    api = await ApiHarness.start({
      script: { default: { text: 'unused' } },
      harness: {
        agents: [
          {
            name: 'lead',
            script: {
              rules: [
                {
                  when: { role: 'user', contains: 'delegate' },
                  reply: {
                    tool_calls: [
                      { name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'ask the user' } },
                    ],
                  },
                },
              ],
              default: { text: 'done' },
            },
          },
          {
            name: 'helper',
            script: {
              rules: [
                {
                  when: { role: 'user', contains: 'ask the user' },
                  reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }] },
                },
              ],
              default: { text: 'found it' },
            },
          },
        ],
      },
    });
    const harness = api;
    const root = await submit(harness, 'please delegate');
    await untilStatus(harness, root.runId, 'waiting_input');
    const waiting = (await list(harness, 'status=waiting_input')).runs;
    const child = waiting.find((run) => run.id !== root.runId);
    expect(waiting.map((run) => run.id)).toEqual([child?.id, root.runId]);
    expect(child).toMatchObject({ agent: 'helper', root_run_id: root.runId });
    expect((await harness.request('GET', '/v1/runs/summary')).body.counts).toMatchObject({
      waiting_input: 2,
      running: 0,
    });
    // The tree says what the run's own view and the list say: both wait for input (one rule for all three).
    const tree = (await harness.request('GET', `/v1/runs/${root.runId}/tree`)).body;
    expect(tree.runs.map((node: { run_id: string; status: string }) => [node.run_id, node.status])).toEqual([
      [root.runId, 'waiting_input'],
      [child?.id, 'waiting_input'],
    ]);
    expect((await harness.request('GET', `/v1/runs/${root.runId}`)).body.status).toBe('waiting_input');
    expect(tree.runs[1].input_line).toBe('ask the user');

    const [question] = (await harness.request('GET', `/v1/sessions/${root.sessionId}/questions`)).body
      .questions;
    await harness.request('POST', `/v1/sessions/${root.sessionId}/respond`, {
      body: { question_id: question.id, response: 'that one' },
    });
    await untilStatus(harness, root.runId, 'completed');
    expect((await list(harness, 'status=waiting_input')).runs).toEqual([]);
    const completed = (await list(harness, 'status=completed')).runs;
    expect(ids(completed)).toEqual([child?.id, root.runId]);

    // The root's usage in the list and its tree's total both count its child's; the child lists its own.
    const after = (await harness.request('GET', `/v1/runs/${root.runId}/tree`)).body;
    const [rootNode, childNode] = after.runs;
    const [childListed, rootListed] = completed as unknown as ListedWithUsage[];
    expect(childListed?.tree_usage).toBeNull();
    expect(rootListed?.usage?.input_tokens).toBeGreaterThan(0);
    expect(childListed?.usage?.input_tokens).toBeGreaterThan(0);
    expect(rootListed?.tree_usage?.input_tokens).toBe(
      (rootListed?.usage?.input_tokens ?? 0) + (childListed?.usage?.input_tokens ?? 0),
    );
    expect(rootNode.total.tokens.input).toBe(rootListed?.tree_usage?.input_tokens);
    expect(rootNode.total.tokens.output).toBe(rootListed?.tree_usage?.output_tokens);
    expect(childNode.total.tokens).toEqual(childNode.tokens);
    // One duration for the list, the tree and the run's view.
    expect(rootNode.duration_ms).toBe(rootListed?.duration_ms);
    expect(rootNode.duration_ms).toBe(
      (await harness.request('GET', `/v1/runs/${root.runId}`)).body.duration_ms,
    );
  });

  it('a cancelled run whose question was pending leaves waiting_input', async () => {
    const harness = await start();
    const asking = await submit(harness, 'a question to cancel');
    await untilStatus(harness, asking.runId, 'waiting_input');
    expect((await harness.request('POST', `/v1/runs/${asking.runId}/cancel`, { body: {} })).status).toBe(202);
    expect(ids((await list(harness, 'status=cancelled')).runs)).toEqual([asking.runId]);
    expect((await harness.request('GET', '/v1/runs/summary')).body.counts).toMatchObject({
      waiting_input: 0,
      cancelled: 1,
    });
  });
});

describe('GET /v1/sessions', () => {
  it('lists sessions by last activity with filters and a cursor; a deleted session and its runs leave both lists', async () => {
    const harness = await start();
    const fresh = await harness.request('POST', '/v1/sessions', { body: { agent: 'helper' } });
    expect(fresh.status).toBe(201);
    const done = await submit(harness, 'hello');
    await untilStatus(harness, done.runId, 'completed');
    const asking = await submit(harness, 'a question please');
    await untilStatus(harness, asking.runId, 'waiting_input');

    const all = await harness.request('GET', '/v1/sessions');
    expect(all.status).toBe(200);
    expect(all.body.sessions.map((session: { id: string }) => session.id)).toEqual([
      asking.sessionId,
      done.sessionId,
      fresh.body.id,
    ]);
    expect(all.body.sessions[0]).toEqual({
      id: asking.sessionId,
      agent: 'lead',
      status: 'active',
      active_run_id: asking.runId,
      created_at: expect.any(String),
      last_active_at: expect.any(String),
    });
    const only = async (query: string) =>
      (await harness.request('GET', `/v1/sessions?${query}`)).body.sessions.map(
        (session: { id: string }) => session.id,
      );
    expect(await only('status=active')).toEqual([asking.sessionId]);
    expect(await only('status=idle')).toEqual([done.sessionId, fresh.body.id]);
    expect(await only('agent=helper')).toEqual([fresh.body.id]);
    expect(await only(`q=${done.sessionId}`)).toEqual([done.sessionId]);
    expect(await only(`q=${done.sessionId}&status=active`)).toEqual([]);
    // A whole session id is read directly: found on the first page, however few entries a page looks at.
    const { redis } = harness.harness;
    const space = harness.harness.engine.space;
    expect(await listSessions(redis, space, { limit: 5, idPrefix: fresh.body.id }, 1)).toEqual({
      sessions: [expect.objectContaining({ id: fresh.body.id, agent: 'helper', status: 'idle' })],
      next: null,
    });
    expect((await listSessions(redis, space, { limit: 5, idPrefix: 'ses_' }, 1)).next).not.toBeNull();
    const doneAt = all.body.sessions[1].last_active_at;
    expect(await only(`until=${doneAt}`)).toEqual([done.sessionId, fresh.body.id]);
    expect(await only(`since=${doneAt}`)).toEqual([asking.sessionId, done.sessionId]);

    const first = await harness.request('GET', '/v1/sessions?limit=2');
    expect(first.body.sessions).toHaveLength(2);
    const second = await harness.request('GET', `/v1/sessions?limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.sessions.map((session: { id: string }) => session.id)).toEqual([fresh.body.id]);
    expect(second.body.next_cursor).toBeNull();
    for (const query of [
      'limit=0',
      'limit=501',
      'status=busy',
      'cursor=abc',
      `cursor=${first.body.next_cursor}x`,
    ]) {
      const refused = await harness.request('GET', `/v1/sessions?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.details.issues[0].path).toBe(query.split('=')[0]);
    }
    // A runs cursor is not a sessions cursor.
    const runsCursor = encodeCursor('runs', `${'1'.repeat(13)}:${done.runId}`);
    expect((await harness.request('GET', `/v1/sessions?cursor=${runsCursor}`)).status).toBe(400);

    expect((await harness.request('DELETE', `/v1/sessions/${done.sessionId}`)).status).toBe(204);
    expect(await only('limit=50')).toEqual([asking.sessionId, fresh.body.id]);
    expect((await list(harness, `session_id=${done.sessionId}`)).runs).toEqual([]);
    expect(ids((await list(harness)).runs)).toEqual([asking.runId]);
    expect((await harness.request('GET', '/v1/runs/summary')).body.total).toBe(1);
  });
});

describe('the OpenAPI document', () => {
  it('documents every filter of the run index and sessions list, and their answers', async () => {
    const harness = await start();
    const document = (await harness.request('GET', '/openapi.json')).body;
    const names = (path: string) =>
      document.paths[path].get.parameters.map((parameter: { name: string }) => parameter.name).sort();
    expect(names('/v1/runs')).toEqual(
      [
        'agent',
        'cursor',
        'limit',
        'q',
        'root',
        'session_id',
        'since',
        'status',
        'tenant',
        'text',
        'until',
      ].sort(),
    );
    expect(names('/v1/runs/summary')).toEqual(['since']);
    expect(names('/v1/sessions')).toEqual(
      ['agent', 'cursor', 'limit', 'q', 'since', 'status', 'until'].sort(),
    );
    const limit = document.paths['/v1/runs'].get.parameters.find(
      (parameter: { name: string }) => parameter.name === 'limit',
    );
    expect(limit.schema).toMatchObject({ minimum: 1, maximum: 500, default: 50 });
    expect(document.paths['/v1/runs'].get.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/RunList',
    );
    expect(
      document.paths['/v1/runs/summary'].get.responses['200'].content['application/json'].schema.$ref,
    ).toBe('#/components/schemas/RunSummary');
    expect(document.paths['/v1/sessions'].get.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/SessionList',
    );
  });
});
