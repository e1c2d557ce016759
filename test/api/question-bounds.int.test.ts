import { afterEach, describe, expect, it } from 'vitest';
import { runIndexKeys, sessionKeys } from '../../src/redis/keys.js';
import { interactionLimits } from '../../src/tools/index.js';
import { waitFor } from '../helpers/crash-scenario.js';
import { scrape } from '../telemetry/scrape.js';
import { ApiHarness } from './api-harness.js';

// A hostile model's questions and progress messages are bounded where they enter (the tool schemas): 20
// questions of ~900 KB each made GET /v1/questions 17.7 MB, polled by the console every 2 s. And GET /metrics
// finds the oldest pending question's age without reading any question record.

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const huge = 'Q'.repeat(900_000);

describe('questions and progress a hostile model sends', () => {
  it('a 900 KB question, too many or too long options, a long default and a 900 KB progress message are error results naming the field and the limit; nothing is asked or stored', async () => {
    api = await ApiHarness.start({
      script: {
        // One call a reply: a reply holds at most max_reply_chars (1,000,000) of arguments.
        replies: [
          { tool_calls: [{ name: 'ask_user', arguments: { question: huge } }] },
          {
            tool_calls: [
              {
                name: 'ask_user',
                arguments: { question: 'Pick one', options: Array.from({ length: 21 }, (_, i) => `o${i}`) },
              },
            ],
          },
          {
            tool_calls: [
              { name: 'ask_user', arguments: { question: 'Pick one', options: ['short', 'O'.repeat(300)] } },
            ],
          },
          {
            tool_calls: [
              {
                name: 'ask_user',
                arguments: { question: 'Pick one', timeout_s: 60, default: 'D'.repeat(900_000) },
              },
            ],
          },
          { tool_calls: [{ name: 'report_progress', arguments: { message: huge } }] },
          { text: 'gave up asking' },
        ],
      },
    });
    const { runId, sessionId } = await api.submitRun('ask me things');
    const run = await api.engine.waitForRun(runId, { timeoutMs: 30_000 });
    // Before the bounds, the run waited for an answer to a 900 KB question.
    expect(run.error).toBeNull();
    expect(run.status).toBe('completed');

    const chat = await api.engine.readChat(sessionId);
    const results = chat.flatMap((message) =>
      message.parts.flatMap((part) => (part.type === 'tool_result' ? [part] : [])),
    );
    expect(results).toHaveLength(5);
    expect(results.every((result) => result.is_error)).toBe(true);
    const texts = results.map((result) => JSON.stringify(result.content));
    const limits = interactionLimits;
    expect(texts[0]).toContain(`question: at most ${limits.questionChars} characters`);
    expect(texts[1]).toContain(`options: at most ${limits.options} options`);
    expect(texts[2]).toContain(`options[1]: at most ${limits.optionChars} characters`);
    expect(texts[3]).toContain(`default: at most ${limits.defaultAnswerChars} characters`);
    expect(texts[4]).toContain(`message: at most ${limits.progressChars} characters`);
    // No result echoes the argument back.
    expect(Math.max(...texts.map((text) => text.length))).toBeLessThan(2_000);

    const inbox = await api.request('GET', '/v1/questions');
    expect(inbox.status).toBe(200);
    expect(inbox.body.questions).toEqual([]);
    const events = await api.engine.readEvents(sessionId);
    expect(events.filter((event) => event.kind === 'ask_user' || event.kind === 'progress')).toEqual([]);
    const stored = await api.harness.redis.hgetall(
      sessionKeys(api.harness.engine.space, sessionId).questions,
    );
    expect(stored).toEqual({});
  });

  it('questions at the bounds are asked whole, and the inbox of 20 of them stays small', async () => {
    const question = 'Q'.repeat(interactionLimits.questionChars);
    const options = Array.from({ length: interactionLimits.options }, (_, index) =>
      `${index}`.padEnd(interactionLimits.optionChars, 'o'),
    );
    api = await ApiHarness.start({
      script: {
        rules: [
          {
            when: { role: 'user' as const, contains: 'ask' },
            reply: { tool_calls: [{ name: 'ask_user', arguments: { question, options } }] },
          },
        ],
        default: { text: 'done' },
      },
    });
    const runs = await Promise.all(Array.from({ length: 20 }, () => api?.submitRun('ask me')));
    for (const run of runs) if (run) await api.pendingQuestion(run.runId);
    const inbox = await api.request('GET', '/v1/questions?limit=100');
    expect(inbox.body.questions).toHaveLength(20);
    expect(inbox.body.questions[0].question).toBe(question);
    expect(inbox.body.questions[0].options).toEqual(options);
    // 20 questions at every bound are about 8,000 characters each: not the 17.7 MB of unbounded ones.
    expect(JSON.stringify(inbox.body).length).toBeLessThan(200_000);
  });
});

describe('the oldest pending question in GET /metrics', () => {
  const askingScript = {
    rules: [
      {
        when: { role: 'user' as const, contains: 'colour' },
        reply: { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
      },
    ],
    default: { text: 'done' },
  };

  async function start(): Promise<ApiHarness> {
    api = await ApiHarness.start({
      script: askingScript,
      harness: { config: { telemetry: { metrics: { enabled: true, worker_port: 0 } } } },
    });
    return api;
  }

  const oldestAge = async (harness: ApiHarness) =>
    (await scrape(`${harness.url}/metrics`)).value('ratchet_question_oldest_pending_age_seconds', {
      kind: 'ask_user',
    });

  it('is read without reading the question records: a 5 MB unreadable record does not change it', async () => {
    const harness = await start();
    const { runId, sessionId } = await harness.submitRun('pick a colour');
    const questionId = await harness.pendingQuestion(runId);
    await waitFor(async () => (await oldestAge(harness)) > 0, 30_000, 'the pending question’s age');
    // The record as a scrape would have to parse it, were it read: 5 MB that is not even JSON.
    const keys = sessionKeys(harness.harness.engine.space, sessionId);
    await harness.harness.redis.hset(keys.questions, questionId, 'x'.repeat(5_000_000));
    const started = performance.now();
    const age = await oldestAge(harness);
    const scrapeMs = performance.now() - started;
    // Before, the scrape parsed every pending record: the unreadable one was left out and the age was 0.
    expect(age).toBeGreaterThan(0);
    expect(age).toBeLessThan(60);
    expect(scrapeMs).toBeLessThan(1_000);
  });

  it('finds questions asked before the index of ages existed, and drops entries of questions that are gone', async () => {
    const harness = await start();
    const { runId } = await harness.submitRun('pick a colour');
    const questionId = await harness.pendingQuestion(runId);
    const { space } = harness.harness.engine;
    const ages = Array.from({ length: space.shards }, (_, shard) =>
      runIndexKeys(space, shard).pendingQuestions('ask_user'),
    );
    // As a question asked by the previous version would be: pending, but not in the index.
    for (const key of ages) await harness.harness.redis.zrem(key, questionId);
    // And an entry whose question's session is gone (deleted by hand, or by a version without the index).
    const goneId = `q-run_0123456789abcdef_0123456789-i1-t0-0`;
    for (const key of ages) await harness.harness.redis.zadd(key, 1, goneId);

    expect(await oldestAge(harness)).toBeGreaterThan(0);
    // The gone question (asked at 1 ms after the epoch) is not the oldest; it is removed.
    expect(await oldestAge(harness)).toBeLessThan(60);
    for (const key of ages) expect(await harness.harness.redis.zscore(key, goneId)).toBeNull();
    expect(
      (await Promise.all(ages.map((key) => harness.harness.redis.zscore(key, questionId)))).some(
        (score) => score !== null,
      ),
    ).toBe(true);
  });
});
