import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiEngine } from '../../src/api/index.js';
import { toolResultsOf } from '../../src/chat/index.js';
import type { Script } from '../../src/models/index.js';
import { ApiHarness, type ApiHarnessOptions } from '../api/api-harness.js';
import { waitFor } from '../helpers/crash-scenario.js';
import {
  callTool,
  connectClient,
  httpTransport,
  ratchetMcpToolNames,
  rawInitializeRequest,
  type ToolOutcome,
} from './mcp-client.js';

let api: ApiHarness | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await api?.close();
  api = undefined;
});

async function start(script: Script, options: Omit<ApiHarnessOptions, 'script'> = {}): Promise<Client> {
  api = await ApiHarness.start({ script, ...options });
  client = await connectClient(httpTransport(api.url));
  return client;
}

const askScript: Script = {
  replies: [
    {
      text: 'one question first',
      tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } }],
    },
    { text: 'Painted it.' },
  ],
};

/** Submits the ask script's task and waits until the run asks its question. */
async function submitAndAwaitQuestion(mcp: Client): Promise<{ submitted: ToolOutcome; runId: string }> {
  const submitted = await callTool(mcp, 'submit_task', { input: 'paint it' });
  const runId: string = submitted.value.run_id;
  await waitFor(
    async () => (await api?.engine.getRun(runId))?.status === 'waiting_input',
    20_000,
    'the question',
  );
  return { submitted, runId };
}

const unknownRun = 'run_0000000000000000_0000000000';

describe('MCP over Streamable HTTP (/mcp)', () => {
  it('reads what the agents of a session wrote: state, tasks and notes', async () => {
    const mcp = await start(
      {
        replies: [
          {
            tool_calls: [
              { name: 'state_set', arguments: { key: 'colour', value: 'blue' } },
              { name: 'task_create', arguments: { title: 'paint' } },
              { name: 'note_write', arguments: { name: 'plan', content: 'paint it blue' } },
            ],
          },
          { text: 'noted' },
        ],
      },
      { harness: { agent: { toolboxes: ['state', 'tasks', 'notes'] } } },
    );
    const submitted = await callTool(mcp, 'submit_task', { input: 'plan it' });
    await callTool(mcp, 'wait_run', { run_id: submitted.value.run_id, timeout_s: 20 });
    const session_id = submitted.value.session_id;
    expect((await callTool(mcp, 'get_session_state', { session_id })).value).toEqual({
      state: { colour: 'blue' },
    });
    const tasks = await callTool(mcp, 'list_session_tasks', { session_id });
    expect(
      tasks.value.tasks.map((task: { title: string; status: string }) => [task.title, task.status]),
    ).toEqual([['paint', 'pending']]);
    const notes = await callTool(mcp, 'list_session_notes', { session_id });
    expect(
      notes.value.notes.map((note: { name: string; content: string }) => [note.name, note.content]),
    ).toEqual([['plan', 'paint it blue']]);
    const unknown = await callTool(mcp, 'get_session_state', { session_id: 'ses_0000000000000000' });
    expect(unknown.isError).toBe(true);
  });

  it("shows a supervisor's sub-goals as its progress, over HTTP and in get_run", async () => {
    const mcp = await start(
      {
        replies: [
          {
            tool_calls: [
              {
                name: 'declare_sub_goals',
                arguments: { sub_goals: [{ id: 'paint', title: 'paint the wall' }] },
              },
            ],
          },
          {
            tool_calls: [
              { name: 'update_sub_goal', arguments: { id: 'paint', status: 'completed', result: 'blue' } },
            ],
          },
        ],
      },
      { harness: { agent: { options: { supervisor: {} } } } },
    );
    const submitted = await callTool(mcp, 'submit_task', { input: 'paint it' });
    await callTool(mcp, 'wait_run', { run_id: submitted.value.run_id, timeout_s: 20 });
    const expected = {
      fraction: 1,
      message: '1 of 1 sub-goals completed',
      sub_goals: [{ id: 'paint', title: 'paint the wall', status: 'completed', result: 'blue' }],
    };
    const got = await callTool(mcp, 'get_run', { run_id: submitted.value.run_id });
    expect(got.value.progress).toMatchObject(expected);
    const wire = await api?.request('GET', `/v1/runs/${submitted.value.run_id}`);
    expect(wire?.body.progress).toMatchObject(expected);
    expect(wire?.body.result).toBe('The sub-goal is completed.\n\n[✓] paint: paint the wall — blue');
  });

  it('lists the tools and the agents', async () => {
    const mcp = await start({ default: { text: 'ok' } });
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(ratchetMcpToolNames);
    const submit = tools.find((tool) => tool.name === 'submit_task');
    expect(submit?.inputSchema.required).toEqual(['input']);
    const agents = await callTool(mcp, 'list_agents', {});
    expect(agents.isError).toBe(false);
    expect(agents.value.agents).toEqual([
      {
        name: 'agent',
        description: 'the agent under test',
        kind: 'agent',
        usage: expect.objectContaining({ requests: 0 }),
      },
    ]);
  });

  it('submit_task starts a run; wait_run reports its events as progress and returns the final answer', async () => {
    const mcp = await start({
      replies: [
        {
          text: 'echoing',
          tool_calls: [{ name: 'slow_echo', arguments: { text: 'hello', delay_ms: 1500 } }],
        },
        { text: 'The answer is hello.' },
      ],
    });
    // Listing the tools makes the SDK client check every structured answer against its output schema.
    await mcp.listTools();
    const submitted = await callTool(mcp, 'submit_task', { input: 'Say hello' });
    expect(submitted.isError).toBe(false);
    expect(submitted.value).toEqual({
      run_id: expect.stringMatching(/^run_/),
      session_id: expect.stringMatching(/^ses_/),
    });
    expect(JSON.parse(submitted.text)).toEqual(submitted.value);

    const progress: Progress[] = [];
    const waited = await callTool(
      mcp,
      'wait_run',
      { run_id: submitted.value.run_id, timeout_s: 20 },
      { onprogress: (update) => progress.push(update) },
    );
    expect(waited.isError).toBe(false);
    expect(waited.value.finished).toBe(true);
    expect(waited.value.run).toMatchObject({
      id: submitted.value.run_id,
      session_id: submitted.value.session_id,
      status: 'completed',
      result: 'The answer is hello.',
      iterations: 2,
    });
    // The tool call took 1.5 s: the wait saw it end and the run complete, as progress, in order.
    const messages = progress.map((update) => update.message);
    expect(messages).toContain('agent: slow_echo returned');
    expect(messages).toContain('agent: run completed');
    // Only what happened after the wait began: the run had started before it (submit_task commits that).
    expect(messages).not.toContain('agent: run started');
    expect(progress.map((update) => update.progress)).toEqual(progress.map((_, index) => index + 1));

    const got = await callTool(mcp, 'get_run', { run_id: submitted.value.run_id });
    expect(got.value).toEqual(waited.value.run);
  });

  it("wait_run says when the timeout passed first; respond answers the agent's question and the run goes on", async () => {
    const mcp = await start(askScript);
    const { submitted, runId } = await submitAndAwaitQuestion(mcp);

    const waiting = await callTool(mcp, 'wait_run', { run_id: runId, timeout_s: 0.3 });
    expect(waiting.value.finished).toBe(false);
    expect(waiting.value.run.status).toBe('waiting_input');
    expect(waiting.value.run.pending_question).toMatchObject({
      kind: 'ask_user',
      question: 'Which colour?',
      options: ['red', 'blue'],
    });

    const answered = await callTool(mcp, 'respond', { run_id: runId, answer: 'blue' });
    expect(answered.isError).toBe(false);
    expect(answered.value).toEqual({
      session_id: submitted.value.session_id,
      question_id: waiting.value.run.pending_question.id,
    });
    const done = await callTool(mcp, 'wait_run', { run_id: runId, timeout_s: 20 });
    expect(done.value).toMatchObject({ finished: true, run: { status: 'completed', result: 'Painted it.' } });
    const chat = await api?.engine.readChat(submitted.value.session_id);
    expect(toolResultsOf(chat?.[2] ?? { parts: [] })[0]).toMatchObject({ content: 'blue', is_error: false });

    // A second answer to the same question is refused, as the HTTP API does (409 question_closed).
    const again = await callTool(mcp, 'respond', {
      question_id: waiting.value.run.pending_question.id,
      answer: 'red',
    });
    expect(again.isError).toBe(true);
    expect(again.text).toMatch(/^conflict: question .* is no longer open/);
  });

  it('respond by question_id resumes the run that asked', async () => {
    const mcp = await start(askScript);
    const { runId } = await submitAndAwaitQuestion(mcp);
    const run = await callTool(mcp, 'get_run', { run_id: runId });
    const answered = await callTool(mcp, 'respond', {
      question_id: run.value.pending_question.id,
      answer: 'red',
    });
    expect(answered.isError).toBe(false);
    const done = await callTool(mcp, 'wait_run', { run_id: runId, timeout_s: 20 });
    expect(done.value.run.status).toBe('completed');
  });

  it('cancel_run cancels a run once; a second cancel is a conflict', async () => {
    const mcp = await start(askScript);
    const { submitted, runId } = await submitAndAwaitQuestion(mcp);
    const cancelled = await callTool(mcp, 'cancel_run', { run_id: runId, reason: 'changed my mind' });
    expect(cancelled.isError).toBe(false);
    expect(cancelled.value).toMatchObject({ id: runId, status: 'cancelled' });
    const events = await api?.harness.events(submitted.value.session_id);
    expect(events?.find((event) => event.kind === 'run_cancelled')?.data).toEqual({
      reason: 'changed my mind',
    });

    const again = await callTool(mcp, 'cancel_run', { run_id: runId });
    expect(again.isError).toBe(true);
    expect(again.text).toMatch(/^conflict: run .* is already cancelled/);
    const waited = await callTool(mcp, 'wait_run', { run_id: runId, timeout_s: 5 });
    expect(waited.value).toMatchObject({ finished: true, run: { status: 'cancelled' } });
  });

  it('answers unknown runs and invalid input with tool errors that name the problem', async () => {
    const mcp = await start({ default: { text: 'ok' } });
    // With the tools listed, the SDK client checks every answer against its tool's schemas: errors pass too.
    await mcp.listTools();
    const unknown = await callTool(mcp, 'get_run', { run_id: unknownRun });
    expect(unknown).toMatchObject({ isError: true, text: `not_found: unknown run ${unknownRun}` });
    expect((await callTool(mcp, 'wait_run', { run_id: 'nonsense', timeout_s: 1 })).text).toBe(
      'not_found: unknown run nonsense',
    );
    expect((await callTool(mcp, 'cancel_run', { run_id: unknownRun })).isError).toBe(true);

    const noAgent = await callTool(mcp, 'submit_task', { input: 'hi', agent: 'ghost' });
    expect(noAgent.text).toMatch(/^not_found: unknown agent "ghost" \(known: agent\)/);

    const emptyInput = await callTool(mcp, 'submit_task', { input: '' });
    expect(emptyInput.isError).toBe(true);
    expect(emptyInput.text).toMatch(/input/);
    const badSession = await callTool(mcp, 'submit_task', { input: 'hi', session_id: 'ses_nope' });
    expect(badSession.text).toMatch(/session_id/);
    expect(badSession.text).toMatch(/must be a session id/);
    const tooLong = await callTool(mcp, 'wait_run', { run_id: unknownRun, timeout_s: 301 });
    expect(tooLong.text).toMatch(/timeout_s/);

    const both = await callTool(mcp, 'respond', { question_id: 'q-x', run_id: unknownRun, answer: 'x' });
    expect(both.text).toMatch(/give either question_id or run_id/);
    const noQuestion = await callTool(mcp, 'respond', { question_id: 'q-nope', answer: 'x' });
    expect(noQuestion.text).toBe('not_found: unknown question q-nope');

    // The server is still there.
    expect((await callTool(mcp, 'list_agents', {})).isError).toBe(false);
  });

  it('answers a server fault with a generic tool error, never its cause', async () => {
    const mcp = await start(
      { default: { text: 'ok' } },
      {
        wrapEngine: (engine) =>
          Object.assign(Object.create(engine) as ApiEngine, {
            getRun: async () => {
              throw new Error('cannot parse record at ratchet:{0}:run:x (internal detail)');
            },
          }),
      },
    );
    const failed = await callTool(mcp, 'get_run', { run_id: unknownRun });
    expect(failed).toMatchObject({ isError: true, text: 'internal: internal server error' });
  });

  it('needs the bearer token when api.tokens is set (401 without it)', async () => {
    api = await ApiHarness.start({
      script: { default: { text: 'ok' } },
      api: { tokens: ['mcp-test-token-0123456789'] },
    });
    const headers = { accept: 'application/json, text/event-stream' };
    const anonymous = await api.request('POST', '/mcp', { body: rawInitializeRequest, headers });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    const wrong = await api.request('POST', '/mcp', {
      body: rawInitializeRequest,
      headers: { ...headers, authorization: 'Bearer wrong' },
    });
    expect(wrong.status).toBe(401);
    await expect(connectClient(httpTransport(api.url))).rejects.toThrow();

    client = await connectClient(httpTransport(api.url, 'mcp-test-token-0123456789'));
    const submitted = await callTool(client, 'submit_task', { input: 'hi' });
    const waited = await callTool(client, 'wait_run', { run_id: submitted.value.run_id, timeout_s: 20 });
    expect(waited.value.run).toMatchObject({ status: 'completed', result: 'ok' });
  });

  it('refuses browser requests from other origins without tokens, and answers GET with 405', async () => {
    api = await ApiHarness.start({ script: { default: { text: 'ok' } } });
    const accept = 'application/json, text/event-stream';
    const foreign = await api.request('POST', '/mcp', {
      body: rawInitializeRequest,
      headers: { accept, origin: 'http://attacker.example' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.message).toMatch(/Origin "http:\/\/attacker.example"/);
    // Another local port is another origin (a page of any local dev server): refused unless listed in
    // api.allowed_origins (host-guard.int.test.ts); the API's own origin is taken.
    const otherPort = await api.request('POST', '/mcp', {
      body: rawInitializeRequest,
      headers: { accept, origin: 'http://localhost:6274' },
    });
    expect(otherPort.status).toBe(403);
    const local = await fetch(`${api.url}/mcp`, {
      method: 'POST',
      headers: { accept, origin: api.url, 'content-type': 'application/json' },
      body: JSON.stringify(rawInitializeRequest),
    });
    expect(local.status).toBe(200);
    expect(await local.text()).toMatch(/"serverInfo":\{"name":"ratchet"/);
    const get = await api.request('GET', '/mcp', { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});
