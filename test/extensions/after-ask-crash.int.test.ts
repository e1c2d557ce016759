import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Message, textOf } from '../../src/chat/index.js';
import { RatchetClient } from '../../src/client/index.js';
import type { RatchetEvent } from '../../src/events/event.js';
import { silentLogger } from '../../src/log/index.js';
import { createHttpServer } from '../../src/server/index.js';
import { askAfterDraft } from '../fixtures/after-effects.js';
import { waitFor, waitForExit } from '../helpers/crash-scenario.js';
import { extensionScope } from '../helpers/extension-scope.js';
import { ExtensionWorld } from '../helpers/extension-world.js';
import { normalizeEvents, normalizeTranscript } from '../helpers/harness.js';
import { journalEntry } from '../helpers/journal-entry.js';

// An effect's after phase asks the person (decision 0049): the question is recorded with the reply's commit,
// the next iteration asks it as ask_user asks and waits, and the answer joins the chat before the model is
// asked again. Under SIGKILL around the reply's commit and the answer's: one question, asked once, answered
// once, and the model reads the answer once.

const scope = extensionScope();

const config = {
  providers: [
    {
      name: 'model',
      kind: 'scripted',
      model: 'test',
      replies: [{ text: 'draft: owls hunt at night' }, { text: 'published: owls hunt at night' }],
      record_calls: 'calls.jsonl',
    },
  ],
  agents: [{ name: 'agent', provider: 'model', effects: [{ kind: 'ask_after_draft' }] }],
};

function newWorld(): ExtensionWorld {
  const world = new ExtensionWorld(config, { effects: [askAfterDraft] });
  return scope.keep(world);
}

function spawnWorker(world: ExtensionWorld, log: string, crashAt?: string) {
  return scope.spawn(world, 'test/fixtures/after-effect-worker.ts', crashAt, { AFTER_EFFECT_LOG: log });
}

/** The after phase's calls, as `<iteration> <decision>` lines. */
const afterCalls = (log: string) =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line !== '');

/** Waits for the run's one question to be pending, and answers it. */
async function answerTheQuestion(
  world: ExtensionWorld,
  sessionId: string,
  answer: string,
  draft = 'draft: owls hunt at night',
) {
  await waitFor(
    async () => (await world.engine.listQuestions(sessionId)).length > 0,
    90_000,
    'the question of the effect',
  );
  const [question] = await world.engine.listQuestions(sessionId);
  expect(question).toMatchObject({
    kind: 'ask_user',
    question: `Publish "${draft}"?`,
    options: ['yes', 'no'],
    tool: null,
    status: 'pending',
  });
  // The run waits for the person as with ask_user, holding no worker; the inbox lists the question.
  expect((await world.engine.getRun(question?.run_id ?? ''))?.status).toBe('waiting_input');
  expect((await world.engine.inbox(10)).questions.map((each) => each.id)).toContain(question?.id);
  await world.engine.respond(sessionId, question?.id ?? '', answer);
  return question?.id ?? '';
}

/** What a run that asked once and was answered "yes" looks like. */
async function expectAskedOnce(world: ExtensionWorld, sessionId: string, runId: string, chat: Message[]) {
  expect(chat.map((message) => `${message.role}:${message.sender}:${textOf(message)}`)).toEqual([
    'user:user:draft something',
    'assistant:agent:draft: owls hunt at night',
    'user:user:Asked: Publish "draft: owls hunt at night"?\nAnswer: yes',
    'assistant:agent:published: owls hunt at night',
  ]);
  expect(chat[2]?.metadata).toMatchObject({ effect: 'ask_after_draft', iteration: 1, after: true });
  const first = await journalEntry(world, sessionId, runId, 'reply:1');
  expect(first.decision).toBe('ask');
  expect(first.after).toMatchObject({
    decisions: [{ effect: 'ask_after_draft', asked: true }],
    ask: {
      effect: 'ask_after_draft',
      question: 'Publish "draft: owls hunt at night"?',
      options: ['yes', 'no'],
    },
  });
  expect((await journalEntry(world, sessionId, runId, 'reply:2')).decision).toBe('final');
  const events: RatchetEvent[] = await world.engine.readEvents(sessionId);
  expect(events.filter((event) => event.kind === 'ask_user')).toHaveLength(1);
  expect(events.filter((event) => event.kind === 'question_answered')).toHaveLength(1);
  expect(events.filter((event) => event.kind === 'run_completed')).toHaveLength(1);
  expect(new Set(chat.map((message) => message.id)).size).toBe(chat.length);
  expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
  expect(await world.engine.listQuestions(sessionId)).toEqual([]);
  // The model's request after the answer holds it once, after the draft.
  const last = world.modelCalls().at(-1);
  expect(last?.messages.filter((message) => message.text.includes('Answer: yes'))).toHaveLength(1);
  return events;
}

describe("an effect's after phase asking the person", () => {
  it('parks the run on the question after an answer, and the answer reaches the model, across SIGKILLs', async () => {
    const reference = newWorld();
    const referenceLog = join(reference.dir, 'after.log');
    process.env.AFTER_EFFECT_LOG = referenceLog;
    await reference.start();
    const started = await reference.engine.startRun({ input: 'draft something' });
    await answerTheQuestion(reference, started.sessionId, 'yes');
    const referenceRun = await reference.engine.waitForRun(started.runId, { timeoutMs: 60_000 });
    expect(referenceRun.status).toBe('completed');
    expect(referenceRun.result).toBe('published: owls hunt at night');
    const referenceChat = await reference.engine.readChat(started.sessionId);
    const referenceEvents = await expectAskedOnce(reference, started.sessionId, started.runId, referenceChat);
    expect(afterCalls(referenceLog)).toEqual(['1 final', '2 final']);
    const referenceCalls = reference.modelCalls().length;
    expect(referenceCalls).toBe(2);
    await scope.release(reference);
    delete process.env.AFTER_EFFECT_LOG;

    const world = newWorld();
    const log = join(world.dir, 'after.log');
    const { runId, sessionId } = await world.engine.startRun({ input: 'draft something' });
    // Before and after the commit that records the question with the reply.
    for (const point of ['iteration.after_effects_decided', 'iteration.after_commit']) {
      const doomed = spawnWorker(world, log, point);
      const exit = await waitForExit(doomed as never, 90_000);
      expect(exit.signal, `worker should die at ${point}:\n${doomed.output()}`).toBe('SIGKILL');
      expect(doomed.output()).toContain(`crash point ${point} reached`);
    }
    // The next worker asks the question and parks; answered, it dies before the answer's commit, the one
    // after it just after that commit.
    const asking = spawnWorker(world, log, 'iteration.before_effect_answer_commit');
    const questionId = await answerTheQuestion(world, sessionId, 'yes');
    expect(questionId).toMatch(/-effect$/);
    const askingExit = await waitForExit(asking as never, 90_000);
    expect(askingExit.signal, asking.output()).toBe('SIGKILL');
    expect(asking.output()).toContain('crash point iteration.before_effect_answer_commit reached');
    const committing = spawnWorker(world, log, 'iteration.after_effect_answer_commit');
    const committingExit = await waitForExit(committing as never, 90_000);
    expect(committingExit.signal, committing.output()).toBe('SIGKILL');
    expect(committing.output()).toContain('crash point iteration.after_effect_answer_commit reached');
    const rescuer = spawnWorker(world, log);
    const run = await world.engine.waitForRun(runId, { timeoutMs: 90_000 });
    expect(run.status, rescuer.output()).toBe('completed');
    rescuer.child.kill('SIGTERM');
    expect((await rescuer.exited).code, rescuer.output()).toBe(0);

    // Iteration 1's after phase decided twice (the first worker died before the reply was recorded), once
    // recorded; iteration 2's once.
    expect(afterCalls(log)).toEqual(['1 final', '1 final', '2 final']);
    const chat = await world.engine.readChat(sessionId);
    const events = await expectAskedOnce(world, sessionId, runId, chat);
    expect(normalizeTranscript(chat, runId)).toEqual(normalizeTranscript(referenceChat, started.runId));
    expect(normalizeEvents(events, runId)).toEqual(normalizeEvents(referenceEvents, started.runId));
    // One model call made again: iteration 1's, whose reply the first worker never recorded.
    expect(world.modelCalls().length).toBe(referenceCalls + 1);
  }, 600_000);

  it('asks after a reply with tool calls once the results are in, and not after the last iteration', async () => {
    const world = new ExtensionWorld(
      {
        ...config,
        providers: [
          {
            name: 'model',
            kind: 'scripted',
            model: 'test',
            replies: [
              { text: 'draft: adding', tool_calls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
              { text: 'three' },
            ],
            record_calls: 'calls.jsonl',
          },
          {
            name: 'once',
            kind: 'scripted',
            model: 'test',
            replies: [{ text: 'draft: owls' }],
          },
        ],
        agents: [
          { name: 'agent', provider: 'model', toolboxes: ['test'], effects: [{ kind: 'ask_after_draft' }] },
          {
            name: 'last',
            provider: 'once',
            options: { max_iterations: 1 },
            effects: [{ kind: 'ask_after_draft' }],
          },
        ],
      },
      { effects: [askAfterDraft] },
    );
    scope.keep(world);
    await world.start();
    const { runId, sessionId } = await world.engine.startRun({ input: 'add', agent: 'agent' });
    await answerTheQuestion(world, sessionId, 'no, add more', 'draft: adding');
    expect((await world.engine.waitForRun(runId, { timeoutMs: 60_000 })).result).toBe('three');
    const chat = await world.engine.readChat(sessionId);
    // The question waits for the call's result: a call is never separated from it.
    expect(
      chat.map((message) => `${message.role}:${message.role === 'tool' ? message.sender : textOf(message)}`),
    ).toEqual([
      'user:add',
      'assistant:draft: adding',
      'tool:add',
      'user:Asked: Publish "draft: adding"?\nAnswer: no, add more',
      'assistant:three',
    ]);
    expect((await journalEntry(world, sessionId, runId, 'reply:1')).decision).toBe('tools');

    // At its last iteration an answer ends the run: nothing is asked, nothing recorded.
    const last = await world.engine.startRun({ input: 'draft', agent: 'last' });
    const lastRun = await world.engine.waitForRun(last.runId, { timeoutMs: 60_000 });
    expect(lastRun).toMatchObject({ status: 'completed', result: 'draft: owls' });
    const entry = await journalEntry(world, last.sessionId, last.runId, 'reply:1');
    expect(entry.decision).toBe('final');
    expect(entry.after).toEqual({ decisions: [], pending: [], compact: false });
    expect(await world.engine.listQuestions(last.sessionId)).toEqual([]);
  }, 120_000);

  it('over HTTP as ask_user: an ask_user event on SSE, the inbox lists it, POST respond answers it', async () => {
    const world = newWorld();
    await world.start();
    const app = createHttpServer({
      engine: world.engine,
      config: world.loaded.config,
      logger: silentLogger(),
      bindHost: '127.0.0.1',
      pingRedis: () => world.redis.ping(),
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const address = app.server.address();
      if (address === null || typeof address === 'string') throw new Error('no TCP address');
      const client = new RatchetClient({ baseUrl: `http://127.0.0.1:${address.port}` });
      const accepted = await client.submit({ input: 'draft something' });
      let asked: { question_id?: unknown; question?: unknown } | undefined;
      for await (const event of client.events(accepted.session_id)) {
        if (event.kind === 'ask_user') {
          asked = event.data as typeof asked;
          break;
        }
      }
      expect(asked).toMatchObject({ question: 'Publish "draft: owls hunt at night"?' });
      const inbox = await client.inbox();
      expect(inbox.questions.map((question) => question.id)).toEqual([asked?.question_id]);
      expect((await client.get(accepted.run_id)).status).toBe('waiting_input');
      await client.answer(accepted.session_id, String(asked?.question_id), 'yes');
      const run = await client.wait(accepted.run_id, { timeoutS: 60 });
      expect(run).toMatchObject({ status: 'completed', result: 'published: owls hunt at night' });
    } finally {
      await app.close();
    }
  });
});
