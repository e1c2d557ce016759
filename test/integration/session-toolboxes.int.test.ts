import { afterEach, describe, expect, it } from 'vitest';
import { type Message, toolResultsOf } from '../../src/chat/index.js';
import type { RatchetEvent } from '../../src/events/event.js';
import { sessionDataKeys } from '../../src/redis/keys.js';
import { stepJobId } from '../../src/workflows/ids.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { Harness, type HarnessOptions } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function start(options: HarnessOptions): Harness {
  harness = new Harness({
    ...options,
    agent: { toolboxes: ['test', 'state', 'tasks', 'notes'], ...options.agent },
  });
  return harness;
}

/** Every tool result of a chat by its call id, the content parsed when it is JSON. */
function resultsById(chat: readonly Message[]): Map<string, { content: unknown; is_error: boolean }> {
  const results = new Map<string, { content: unknown; is_error: boolean }>();
  for (const message of chat) {
    for (const result of toolResultsOf(message)) {
      let content: unknown = result.content;
      try {
        content = JSON.parse(result.content);
      } catch {
        // plain text (an error message)
      }
      results.set(result.tool_call_id, { content, is_error: result.is_error });
    }
  }
  return results;
}

function toolEvents(events: readonly RatchetEvent[], kind: 'tool_call_start' | 'tool_call_end', id: string) {
  return events.findIndex((event) => event.kind === kind && event.data.tool_call_id === id);
}

describe('state', () => {
  it('sets, gets and lists JSON values kept by the session for its runs', async () => {
    const h = start({
      script: {
        replies: [
          {
            tool_calls: [
              { id: 'set_plan', name: 'state_set', arguments: { key: 'plan', value: { steps: [1, 2] } } },
              { id: 'set_flag', name: 'state_set', arguments: { key: 'done', value: false } },
            ],
          },
          {
            tool_calls: [
              { id: 'get_plan', name: 'state_get', arguments: { key: 'plan' } },
              { id: 'get_missing', name: 'state_get', arguments: { key: 'nothing' } },
              { id: 'list', name: 'state_list', arguments: {} },
            ],
          },
          { text: 'stored' },
          // The next run of the session.
          { tool_calls: [{ id: 'get_later', name: 'state_get', arguments: { key: 'done' } }] },
          { text: 'read' },
        ],
      },
    });
    await h.startWorker();
    const first = await h.engine.startRun({ input: 'remember the plan' });
    expect((await h.engine.waitForRun(first.runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const second = await h.engine.startRun({ sessionId: first.sessionId, input: 'what is done?' });
    expect((await h.engine.waitForRun(second.runId, { timeoutMs: 20_000 })).status).toBe('completed');

    const results = resultsById(await h.transcript(first.sessionId));
    expect(results.get('set_plan')).toEqual({ content: { ok: true, key: 'plan' }, is_error: false });
    expect(results.get('get_plan')?.content).toEqual({ found: true, key: 'plan', value: { steps: [1, 2] } });
    expect(results.get('get_missing')?.content).toEqual({ found: false, key: 'nothing' });
    expect(results.get('list')?.content).toEqual({ keys: ['done', 'plan'] });
    expect(results.get('get_later')?.content).toEqual({ found: true, key: 'done', value: false });

    // The state belongs to the session: deleting the session deletes it.
    const stateKey = sessionDataKeys(h.engine.space, first.sessionId).state;
    expect(await h.redis.exists(stateKey)).toBe(1);
    expect(await h.engine.deleteSession(first.sessionId)).toBe(true);
    expect(await h.redis.exists(stateKey)).toBe(0);
  });

  it('state_watch parks until a state_set of its key wakes it, holding no worker slot meanwhile', async () => {
    // One worker slot: the watch must give it up for the set to run at all. The watch's own timeout and the
    // recheck are far away, so only the set's wake-up can end it in time.
    const h = start({
      worker: { concurrency: 1, question_recheck_ms: 60_000 },
      script: {
        replies: [
          {
            tool_calls: [
              { id: 'watch', name: 'state_watch', arguments: { key: 'ready', timeout_s: 60 } },
              { id: 'set', name: 'state_set', arguments: { key: 'ready', value: 'go' } },
            ],
          },
          { text: 'both done' },
        ],
      },
    });
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'wait for it' });
    const run = await h.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');

    const results = resultsById(await h.transcript(sessionId));
    expect(results.get('watch')).toEqual({
      content: { found: true, key: 'ready', value: 'go' },
      is_error: false,
    });
    const events = await h.events(sessionId);
    // The watch started first and ended after the set: it waited, and the set woke it.
    expect(toolEvents(events, 'tool_call_start', 'watch')).toBeLessThan(
      toolEvents(events, 'tool_call_start', 'set'),
    );
    expect(toolEvents(events, 'tool_call_end', 'set')).toBeLessThan(
      toolEvents(events, 'tool_call_end', 'watch'),
    );
    // Woken, not re-run after a crash.
    const end = events[toolEvents(events, 'tool_call_end', 'watch')];
    expect(end?.kind === 'tool_call_end' && end.data.interrupted).toBeUndefined();
    // Nothing is left waiting on the key.
    expect(await h.redis.hlen(sessionDataKeys(h.engine.space, sessionId).stateWatchers)).toBe(0);
  });

  it('state_watch in one child run is woken by state_set in another run of the session', async () => {
    // Two child runs of one session, on one worker slot: the watcher parks, the setter runs and wakes it.
    const h = new Harness({
      worker: { concurrency: 1, question_recheck_ms: 60_000 },
      agents: [
        {
          name: 'lead',
          script: {
            rules: [{ when: { role: 'tool' }, reply: { text: 'both finished' } }],
            replies: [
              {
                tool_calls: [
                  {
                    name: 'spawn_agents',
                    arguments: {
                      tasks: [
                        { agent: 'waiter', task: 'wait for the report' },
                        { agent: 'writer', task: 'write the report' },
                      ],
                    },
                  },
                ],
              },
            ],
          },
        },
        {
          name: 'waiter',
          toolboxes: ['state'],
          script: {
            rules: [{ when: { role: 'tool' }, reply: { text: 'got it' } }],
            replies: [
              {
                tool_calls: [
                  { id: 'watch', name: 'state_watch', arguments: { key: 'report', timeout_s: 60 } },
                ],
              },
            ],
          },
        },
        {
          name: 'writer',
          toolboxes: ['state'],
          script: {
            rules: [{ when: { role: 'tool' }, reply: { text: 'written' } }],
            replies: [
              { tool_calls: [{ name: 'state_set', arguments: { key: 'report', value: { pages: 3 } } }] },
            ],
          },
        },
      ],
    });
    harness = h;
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'coordinate' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');

    const events = await h.events(sessionId);
    const watchEnd = events.find(
      (event) => event.kind === 'tool_call_end' && event.data.name === 'state_watch',
    );
    const setEnd = events.findIndex(
      (event) => event.kind === 'tool_call_end' && event.data.name === 'state_set',
    );
    const watchStart = events.findIndex(
      (event) => event.kind === 'tool_call_start' && event.data.name === 'state_watch',
    );
    expect(watchEnd?.kind === 'tool_call_end' && JSON.parse(watchEnd.data.content)).toEqual({
      found: true,
      key: 'report',
      value: { pages: 3 },
    });
    // The watch waited in one run while the set ran in another.
    expect(watchStart).toBeLessThan(setEnd);
    expect(setEnd).toBeLessThan(events.indexOf(watchEnd as RatchetEvent));
    expect(new Set([watchEnd?.run_id, events[setEnd]?.run_id, runId]).size).toBe(3);
  });

  it('state_watch times out at a deadline fixed once, while another run uses the only worker slot', async () => {
    const h = start({
      // Rechecks every 300 ms: each wake-up runs the handler again, and none may move the deadline.
      worker: { concurrency: 1, question_recheck_ms: 300 },
      script: {
        rules: [{ when: { role: 'user', contains: 'quick' }, reply: { text: 'quick answer' } }],
        replies: [
          { tool_calls: [{ id: 'watch', name: 'state_watch', arguments: { key: 'never', timeout_s: 2 } }] },
          { text: 'gave up waiting' },
        ],
      },
    });
    await h.startWorker();
    const startedAt = Date.now();
    const watching = await h.engine.startRun({ input: 'wait for the key' });
    const watchJob = stepJobId.tool(watching.runId, 1, 0);
    const queue = h.engine.queues.queue(0);
    await waitFor(async () => (await queue.getJobState(watchJob)) === 'delayed', 10_000, 'the watch to park');

    // The only slot is free: another session's run completes while the watch waits.
    const other = await h.engine.startRun({ input: 'a quick question' });
    expect((await h.engine.waitForRun(other.runId, { timeoutMs: 10_000 })).status).toBe('completed');
    expect((await h.engine.getRun(watching.runId))?.status).toBe('running');

    const run = await h.engine.waitForRun(watching.runId, { timeoutMs: 15_000 });
    expect(run.status).toBe('completed');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2_000);
    const results = resultsById(await h.transcript(watching.sessionId));
    expect(results.get('watch')).toEqual({
      content: { found: false, timed_out: true, key: 'never' },
      is_error: false,
    });
  });
});

describe('tasks', () => {
  it('creates, claims (one claimer wins), updates and lists tasks', async () => {
    const h = start({
      script: {
        replies: [
          { tool_calls: [{ id: 'create_docs', name: 'task_create', arguments: { title: 'write docs' } }] },
          {
            tool_calls: [
              {
                id: 'create_bug',
                name: 'task_create',
                arguments: { title: 'fix bug', description: 'in parser' },
              },
            ],
          },
          {
            // Two calls claim one task at once: exactly one gets it.
            tool_calls: [
              { id: 'claim_a', name: 'task_claim', arguments: { id: '1' } },
              { id: 'claim_b', name: 'task_claim', arguments: { id: '1' } },
            ],
          },
          {
            tool_calls: [
              {
                id: 'complete',
                name: 'task_update',
                arguments: { id: '1', status: 'completed', note: 'shipped' },
              },
              { id: 'skip_claim', name: 'task_update', arguments: { id: '2', status: 'in_progress' } },
              { id: 'claim_done', name: 'task_claim', arguments: { id: '1' } },
            ],
          },
          { tool_calls: [{ id: 'list', name: 'task_list', arguments: {} }] },
          { text: 'board tidy' },
        ],
      },
    });
    await h.startWorker();
    const { runId, sessionId } = await h.engine.startRun({ input: 'plan the work' });
    expect((await h.engine.waitForRun(runId, { timeoutMs: 20_000 })).status).toBe('completed');

    const results = resultsById(await h.transcript(sessionId));
    expect(results.get('create_docs')?.content).toMatchObject({ task: { id: '1', title: 'write docs' } });
    expect(results.get('create_bug')?.content).toMatchObject({ task: { id: '2', title: 'fix bug' } });
    const claims = [results.get('claim_a'), results.get('claim_b')];
    const winners = claims.filter((claim) => claim?.is_error === false);
    const losers = claims.filter((claim) => claim?.is_error === true);
    expect(winners).toHaveLength(1);
    expect(winners[0]?.content).toMatchObject({
      claimed: true,
      task: { status: 'in_progress', assignee: 'agent' },
    });
    expect(losers[0]?.content).toMatch(/task 1 is already claimed by this run/);
    expect(results.get('skip_claim')).toMatchObject({ is_error: true });
    expect(results.get('skip_claim')?.content).toMatch(/call task_claim with id "2"/);
    expect(results.get('claim_done')?.content).toMatch(/task 1 is already claimed/);
    expect(results.get('list')?.content).toMatchObject({
      tasks: [
        { id: '1', title: 'write docs', status: 'completed', assignee: 'agent', note: 'shipped' },
        {
          id: '2',
          title: 'fix bug',
          description: 'in parser',
          status: 'pending',
          assignee: null,
          note: null,
        },
      ],
    });
  });

  it('task_create re-run after a crash finds the task it created instead of adding another', async () => {
    const h = start({
      script: {
        replies: [
          { tool_calls: [{ id: 'create', name: 'task_create', arguments: { title: 'only once' } }] },
          { text: 'created' },
        ],
      },
    });
    const { runId, sessionId } = await h.engine.startRun({ input: 'add a task' });
    // The handler created the task; the worker dies before the outcome is recorded, so the call runs again.
    const crashing = h.spawnWorker({ crashAt: 'tool.before_commit' });
    await crashing.exited;
    h.spawnWorker();
    const run = await h.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status, crashing.output()).toBe('completed');
    const tasks = await h.redis.hgetall(sessionDataKeys(h.engine.space, sessionId).tasks);
    expect(Object.keys(tasks)).toEqual(['1']);
    expect(resultsById(await h.transcript(sessionId)).get('create')?.content).toMatchObject({
      task: { id: '1', title: 'only once' },
    });
  });
});

describe('state_delete', () => {
  it('deletes once across a crash: run again, it does not remove the value set meanwhile', async () => {
    const h = start({
      script: {
        replies: [
          { tool_calls: [{ id: 'delete', name: 'state_delete', arguments: { key: 'draft' } }] },
          { tool_calls: [{ id: 'get', name: 'state_get', arguments: { key: 'draft' } }] },
          { text: 'deleted' },
        ],
      },
    });
    const { runId, sessionId } = await h.engine.startRun({ input: 'drop the draft' });
    const stateKey = sessionDataKeys(h.engine.space, sessionId).state;
    await h.redis.hset(stateKey, 'draft', JSON.stringify('v1'));
    // The handler deleted the key; the worker dies before the outcome is recorded, so the call runs again.
    const crashing = h.spawnWorker({ crashAt: 'tool.before_commit' });
    await crashing.exited;
    expect(await h.redis.hexists(stateKey, 'draft')).toBe(0);
    // Meanwhile another agent sets the key again.
    await h.redis.hset(stateKey, 'draft', JSON.stringify('v2'));
    h.spawnWorker();
    const run = await h.engine.waitForRun(runId, { timeoutMs: 30_000 });
    expect(run.status, crashing.output()).toBe('completed');

    const results = resultsById(await h.transcript(sessionId));
    expect(results.get('delete')).toEqual({
      content: { ok: true, key: 'draft', deleted: true },
      is_error: false,
    });
    expect(results.get('get')?.content).toEqual({ found: true, key: 'draft', value: 'v2' });
    const events = await h.events(sessionId);
    const end = events[toolEvents(events, 'tool_call_end', 'delete')];
    expect(end?.kind === 'tool_call_end' && end.data.interrupted).toBe('rerun');
  });
});

describe('notes', () => {
  it('keeps session notes for every agent and agent notes for their writer only', async () => {
    const agent = (name: string) => ({
      name,
      provider: 'model',
      toolboxes: ['notes'],
    });
    const h = start({
      config: { agents: [agent('writer'), agent('reader')] },
      script: {
        replies: [
          {
            tool_calls: [
              {
                id: 'w_shared',
                name: 'note_write',
                arguments: { name: 'summary', content: 'the plan is set' },
              },
              {
                id: 'w_own',
                name: 'note_write',
                arguments: { name: 'draft', content: 'half done', scope: 'agent' },
              },
            ],
          },
          {
            tool_calls: [
              { id: 'r_own', name: 'note_read', arguments: { name: 'draft', scope: 'agent' } },
              { id: 'l_writer', name: 'note_list', arguments: {} },
            ],
          },
          { text: 'noted' },
          // A run of the other agent in the same session.
          {
            tool_calls: [
              { id: 'r_shared', name: 'note_read', arguments: { name: 'summary' } },
              { id: 'r_other', name: 'note_read', arguments: { name: 'draft', scope: 'agent' } },
              { id: 'l_reader', name: 'note_list', arguments: {} },
            ],
          },
          { text: 'read' },
        ],
      },
    });
    await h.startWorker();
    const first = await h.engine.startRun({ input: 'take notes', agent: 'writer' });
    expect((await h.engine.waitForRun(first.runId, { timeoutMs: 20_000 })).status).toBe('completed');
    const second = await h.engine.startRun({ sessionId: first.sessionId, input: 'read', agent: 'reader' });
    expect((await h.engine.waitForRun(second.runId, { timeoutMs: 20_000 })).status).toBe('completed');

    const results = resultsById(await h.transcript(first.sessionId));
    expect(results.get('w_own')?.content).toEqual({ written: true, name: 'draft', scope: 'agent' });
    expect(results.get('r_own')?.content).toMatchObject({
      found: true,
      content: 'half done',
      written_by: 'writer',
    });
    expect(results.get('l_writer')?.content).toEqual({
      notes: [
        { name: 'draft', scope: 'agent' },
        { name: 'summary', scope: 'session' },
      ],
    });
    expect(results.get('r_shared')?.content).toMatchObject({
      found: true,
      content: 'the plan is set',
      written_by: 'writer',
    });
    expect(results.get('r_other')?.content).toEqual({ found: false, name: 'draft', scope: 'agent' });
    expect(results.get('l_reader')?.content).toEqual({ notes: [{ name: 'summary', scope: 'session' }] });
  });
});
