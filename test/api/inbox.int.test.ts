import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, expect, it } from 'vitest';
import { RatchetClient } from '../../src/client/index.js';
import { engineFromConfig } from '../../src/engine/index.js';
import { createLogger } from '../../src/log/index.js';
import { sessionKeys } from '../../src/redis/keys.js';
import { callTool, connectClient, httpTransport } from '../mcp-server/mcp-client.js';
import { ApiHarness } from './api-harness.js';

// GET /v1/questions (the console's inbox): every pending question and approval of every session, newest
// first, as each session lists them, from the run index's waiting_input runs; bounded, and answerable.

let api: ApiHarness | undefined;
let mcp: Client | undefined;
afterEach(async () => {
  await mcp?.close();
  mcp = undefined;
  await api?.close();
  api = undefined;
});

const leadScript = {
  rules: [
    {
      when: { role: 'user' as const, contains: 'delegate' },
      reply: {
        tool_calls: [{ name: 'delegate_to_agent', arguments: { agent: 'helper', task: 'ask them' } }],
      },
    },
    {
      when: { role: 'user' as const, contains: 'charge' },
      reply: { tool_calls: [{ name: 'charge_card', arguments: { amount: 42 } }] },
    },
    {
      when: { role: 'user' as const, contains: 'question' },
      reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
    },
  ],
  default: { text: 'done' },
};

async function start(): Promise<ApiHarness> {
  api = await ApiHarness.start({
    script: { default: { text: 'unused' } },
    harness: {
      agents: [
        { name: 'lead', script: leadScript, tools: { charge_card: { requires_approval: true } } },
        {
          name: 'helper',
          script: {
            rules: [
              {
                when: { role: 'user' as const, contains: 'ask them' },
                reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Helper asks: why?' } }] },
              },
            ],
            default: { text: 'helped' },
          },
        },
      ],
    },
  });
  return api;
}

async function sessionQuestions(harness: ApiHarness, sessionId: string) {
  const listed = await harness.request('GET', `/v1/sessions/${sessionId}/questions`);
  expect(listed.status).toBe(200);
  return listed.body.questions;
}

it('lists every pending question and approval across sessions, newest first, as each session shows them', async () => {
  const harness = await start();
  const done = await harness.submitRun('hello', { agent: 'lead' });
  await harness.untilRunStatus(done.runId, 'completed');
  const asking = await harness.submitRun('a question please', { agent: 'lead' });
  await harness.untilRunStatus(asking.runId, 'waiting_input');
  const charging = await harness.submitRun('charge the card', { agent: 'lead' });
  await harness.untilRunStatus(charging.runId, 'waiting_input');
  const delegating = await harness.submitRun('please delegate', { agent: 'lead' });
  await harness.untilRunStatus(delegating.runId, 'waiting_input');
  const answered = await harness.submitRun('another question', { agent: 'lead' });
  await harness.untilRunStatus(answered.runId, 'waiting_input');
  const [answeredQuestion] = await sessionQuestions(harness, answered.sessionId);
  expect(
    (
      await harness.request('POST', `/v1/sessions/${answered.sessionId}/respond`, {
        body: { question_id: answeredQuestion.id, response: 'red' },
      })
    ).status,
  ).toBe(202);
  await harness.untilRunStatus(answered.runId, 'completed');

  const inbox = await harness.request('GET', '/v1/questions');
  expect(inbox.status).toBe(200);
  expect(inbox.body.truncated).toBe(false);
  const [child, approval, question, ...rest] = inbox.body.questions;
  expect(rest).toEqual([]);
  // Each as its session lists it, with the root of the asking run's tree.
  const [delegatingQuestion] = await sessionQuestions(harness, delegating.sessionId);
  expect(child).toEqual({ ...delegatingQuestion, root_run_id: delegating.runId });
  expect(child).toMatchObject({ kind: 'ask_user', agent: 'helper', question: 'Helper asks: why?' });
  expect(child.run_id).not.toBe(delegating.runId);
  expect(approval).toEqual({
    ...(await sessionQuestions(harness, charging.sessionId))[0],
    root_run_id: null,
  });
  expect(approval).toMatchObject({
    kind: 'approval',
    run_id: charging.runId,
    session_id: charging.sessionId,
    agent: 'lead',
    status: 'pending',
    tool: { name: 'charge_card', arguments: '{"amount":42}' },
  });
  expect(question).toEqual({ ...(await sessionQuestions(harness, asking.sessionId))[0], root_run_id: null });
  expect(question).toMatchObject({ kind: 'ask_user', run_id: asking.runId, question: 'Which colour?' });
  // Newest first, by when they were asked.
  const asked = inbox.body.questions.map((item: { created_at: string }) => item.created_at);
  expect([...asked].sort().reverse()).toEqual(asked);

  // Bounded: a smaller limit keeps the newest and says more are pending.
  const two = await harness.request('GET', '/v1/questions?limit=2');
  expect(two.body).toEqual({ questions: [child, approval], truncated: true });
  expect((await harness.request('GET', '/v1/questions?limit=0')).status).toBe(400);
  expect((await harness.request('GET', '/v1/questions?limit=501')).status).toBe(400);

  // The typed client and the MCP tool read the same answer; an answer given from the inbox takes the item out.
  const client = new RatchetClient({ baseUrl: harness.url });
  expect(await client.inbox()).toEqual(inbox.body);
  mcp = await connectClient(httpTransport(harness.url));
  const tool = await callTool(mcp, 'list_pending_questions', { limit: 2 });
  expect(tool.isError).toBe(false);
  expect(tool.value).toEqual(two.body);
  expect(await client.inbox({ limit: 1 })).toEqual({ questions: [child], truncated: true });
  await client.approve(approval.session_id, approval.id, 'approve');
  await harness.untilRunStatus(charging.runId, 'completed');
  await client.answer(child.session_id, child.id, 'because');
  await harness.untilRunStatus(delegating.runId, 'completed');
  expect(await client.inbox()).toEqual({ questions: [question], truncated: false });
});

it('leaves out a question record that does not parse and lists the others', async () => {
  const harness = await start();
  const first = await harness.submitRun('a question please', { agent: 'lead' });
  await harness.untilRunStatus(first.runId, 'waiting_input');
  const second = await harness.submitRun('another question', { agent: 'lead' });
  await harness.untilRunStatus(second.runId, 'waiting_input');
  const [broken] = await sessionQuestions(harness, first.sessionId);
  const space = harness.harness.engine.space;
  await harness.harness.redis.hset(
    sessionKeys(space, first.sessionId).questions,
    broken.id,
    JSON.stringify({ ...broken, v: 1, kind: 'a trap' }),
  );

  const inbox = await harness.request('GET', '/v1/questions');
  expect(inbox.status).toBe(200);
  expect(inbox.body.questions.map((item: { run_id: string }) => item.run_id)).toEqual([second.runId]);

  // The engine says which record it left out.
  const lines: string[] = [];
  const engine = engineFromConfig({
    config: harness.harness.loaded.config,
    redis: harness.harness.redis,
    logger: createLogger({ level: 'warn', destination: { write: (line: string) => lines.push(line) } }),
  });
  try {
    expect((await engine.inbox(10)).questions).toHaveLength(1);
  } finally {
    await engine.close();
  }
  expect(lines.map((line) => JSON.parse(line))).toEqual([
    expect.objectContaining({
      level: 40,
      question_id: broken.id,
      msg: 'question record does not parse; left out of the inbox',
    }),
  ]);
});

it('needs the bearer token when the API has tokens', async () => {
  api = await ApiHarness.start({ script: { default: { text: 'done' } }, api: { tokens: ['inbox-token'] } });
  expect((await api.request('GET', '/v1/questions')).status).toBe(401);
  const allowed = await api.request('GET', '/v1/questions', {
    headers: { authorization: 'Bearer inbox-token' },
  });
  expect(allowed).toMatchObject({ status: 200, body: { questions: [], truncated: false } });
});
