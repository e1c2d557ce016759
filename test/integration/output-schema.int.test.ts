import { afterEach, describe, expect, it } from 'vitest';
import { textOf } from '../../src/chat/index.js';
import { Harness } from '../helpers/harness.js';

// options.output_schema: the final answer is a JSON object matching a JSON Schema. A provider that supports
// structured output is asked for it; every provider's answer is checked, and one that does not match goes
// back with the errors (output_schema_retries times) before the run fails.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const outputSchema = {
  type: 'object',
  required: ['answer', 'confidence'],
  properties: { answer: { type: 'string' }, confidence: { type: 'number', minimum: 0, maximum: 1 } },
};

function withSchema(replies: string[], provider: Record<string, unknown> = {}, retries?: number) {
  return new Harness({
    script: { replies: replies.map((text) => ({ text })) },
    provider,
    agent: {
      options: {
        max_iterations: 6,
        output_schema: outputSchema,
        ...(retries === undefined ? {} : { output_schema_retries: retries }),
      },
    },
  });
}

describe('structured final answers (options.output_schema)', () => {
  it('a provider without structured output: the schema is in the instructions, a mismatch goes back', async () => {
    harness = withSchema(['The answer is 42.', '{"answer": "42", "confidence": 0.8}']);
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'what is it?' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    expect(run.confidence).toBe(0.8);
    const calls = harness.modelCalls();
    expect(calls).toHaveLength(2);
    expect(calls[0]?.system).toContain('matches this JSON Schema: {"type":"object"');
    expect(calls[0]).not.toHaveProperty('response_format');
    const chat = await harness.transcript(sessionId);
    const feedback = chat.find((message) => message.sender === 'guardrail');
    expect(textOf(feedback ?? { parts: [] })).toContain('the answer is not valid JSON');
    const events = await harness.events(sessionId);
    const ended = events.find((event) => event.kind === 'agent_end');
    expect(ended?.data).toMatchObject({ metadata: { confidence: 0.8 } });
    const rejections = events.filter((event) => event.kind === 'answer_rejected');
    expect(rejections.map((event) => event.data)).toEqual([
      {
        iteration: 1,
        check: 'options.output_schema',
        reason: expect.stringContaining('the answer is not valid JSON'),
        retry: 1,
        max_retries: 2,
      },
    ]);
  });

  it('a provider with structured output is asked for it, and its answer is still checked', async () => {
    harness = withSchema(['{"answer": "42", "confidence": 7}', '{"answer": "42", "confidence": 0.9}'], {
      structured_outputs: true,
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'what is it?' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    expect(run.confidence).toBe(0.9);
    const calls = harness.modelCalls() as unknown as { response_format?: unknown }[];
    expect(calls[0]?.response_format).toEqual({ type: 'json', schema: outputSchema, name: 'answer' });
    const feedback = (await harness.transcript(sessionId)).find((message) => message.sender === 'guardrail');
    expect(textOf(feedback ?? { parts: [] })).toContain('$.confidence: must be at most 1');
  });

  it('fails the run once output_schema_retries answers went back', async () => {
    harness = withSchema(['no', 'still no', 'never'], {}, 1);
    await harness.startWorker();
    const { runId } = await harness.engine.startRun({ input: 'what is it?' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('guardrail_failed');
    expect(run.error?.message).toContain('the final answer failed options.output_schema after 1 retry');
    expect(harness.modelCalls()).toHaveLength(2);
  });
});
