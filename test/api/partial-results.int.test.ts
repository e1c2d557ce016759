import { afterEach, describe, expect, it } from 'vitest';
import { RatchetClient } from '../../src/client/index.js';
import type { Script } from '../../src/models/index.js';
import { partialResultLimits } from '../../src/tools/index.js';
import { ApiHarness } from './api-harness.js';

// A run reports named intermediate results with report_progress's `data`; they are in its result metadata
// (`metadata.partial_results`) on the API, in the client's types, and in its agent_end event. The model is
// treated as hostile: every bound is tested with what it may send.

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const report = (data: unknown, message = 'progress') => ({
  tool_calls: [{ name: 'report_progress', arguments: { message, data } }],
});

async function finishedRun(script: Script) {
  api = await ApiHarness.start({ script });
  const client = new RatchetClient({ baseUrl: api.url });
  const accepted = await client.submit({ input: 'research owls' });
  const run = await client.wait(accepted.run_id, { timeoutS: 30 });
  return { client, run, sessionId: accepted.session_id };
}

describe('partial_results', () => {
  it('carries what report_progress reported by name into the result metadata (a name again replaces it)', async () => {
    const { run, sessionId } = await finishedRun({
      replies: [
        report({ sources: ['a', 'b'], draft: 'v1' }),
        report({ draft: { text: 'v2', words: 2 }, verdict: null }),
        { text: 'done' },
      ],
    });
    expect(run.status).toBe('completed');
    expect(run.metadata.partial_results).toEqual({
      sources: ['a', 'b'],
      draft: { text: 'v2', words: 2 },
      verdict: null,
    });
    const events = await (api as ApiHarness).harness.events(sessionId);
    const end = events.find((event) => event.kind === 'agent_end');
    expect(end?.data).toMatchObject({ metadata: { partial_results: run.metadata.partial_results } });
  });

  it('is {} for a run that reported none', async () => {
    const { run } = await finishedRun({ replies: [{ text: 'done' }] });
    expect(run.metadata.partial_results).toEqual({});
  });

  it('refuses a report past its bounds with an error naming the field, and keeps nothing of it', async () => {
    const tooMany = Object.fromEntries(
      Array.from({ length: partialResultLimits.names + 1 }, (_, index) => [`r${index}`, index]),
    );
    const { run, client } = await finishedRun({
      replies: [
        report({ big: 'x'.repeat(partialResultLimits.valueChars) }),
        report({ 'bad name!': 1 }),
        report(tooMany),
        report({ ['n'.repeat(partialResultLimits.nameChars + 1)]: 1 }),
        report(['not', 'an', 'object']),
        report({ kept: true }),
        { text: 'done' },
      ],
    });
    expect(run.status).toBe('completed');
    expect(run.metadata.partial_results).toEqual({ kept: true });
    const messages = await client.runMessages(run.id);
    const errors = messages.messages
      .filter((message) => message.role === 'tool')
      .flatMap((message) => message.parts.flatMap((part) => (part.type === 'tool_result' ? [part] : [])))
      .filter((part) => part.is_error)
      .map((part) => part.content);
    expect(errors).toHaveLength(5);
    expect(errors[0]).toMatch(/data\.big.*at most 2000 characters as JSON/);
    expect(errors[1]).toMatch(/data.*letters, digits/);
    expect(errors[2]).toMatch(/data: 21 names, more than the 20 one report may carry/);
    expect(errors[3]).toMatch(/data.*at most 64 characters/);
    expect(errors[4]).toMatch(/data/);
  });

  it(`keeps at most ${partialResultLimits.names} names in a run: a new name past them is not kept`, async () => {
    const first = Object.fromEntries(
      Array.from({ length: partialResultLimits.names }, (_, index) => [`r${index}`, index]),
    );
    const { run } = await finishedRun({
      replies: [report(first), report({ extra: 1, r0: 'again' }), { text: 'done' }],
    });
    expect(Object.keys(run.metadata.partial_results)).toHaveLength(partialResultLimits.names);
    expect(run.metadata.partial_results).toEqual({ ...first, r0: 'again' });
  });
});
