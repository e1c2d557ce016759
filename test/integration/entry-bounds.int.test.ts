import { afterEach, describe, expect, it } from 'vitest';
import { maxChatEntryChars, textOf } from '../../src/chat/index.js';
import { eventStringLimit, storedEventSchema } from '../../src/events/event.js';
import { Harness } from '../helpers/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('what one event or chat entry may hold', () => {
  it('a reply longer than an event may hold is whole in the chat and the run, cut with a note in its events', async () => {
    const answer = `START ${'x'.repeat(1_500_000)} END`;
    harness = new Harness({
      script: { replies: [{ text: answer }] },
      // The reply limit allows it: the event bound is the one under test.
      provider: { max_reply_chars: 2_000_000 },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'answer at length' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 60_000 });
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(run.result).toBe(answer);
    const transcript = await harness.transcript(sessionId);
    expect(transcript.map(textOf)).toContain(answer);

    // Every event as stored parses, and none holds a string longer than the bound and its note.
    const [eventsKey] = (await harness.redis.keys(`${harness.prefix}:*:events`)).filter((key) =>
      key.includes(sessionId),
    );
    const stream = await harness.redis.xrange(eventsKey as string, '-', '+');
    expect(stream.length).toBeGreaterThan(0);
    for (const [, fields] of stream) {
      expect(fields[0]).toBe('event');
      const json = fields[1] as string;
      expect(json.length).toBeLessThan(eventStringLimit + 10_000);
      storedEventSchema.parse(JSON.parse(json));
    }
    const events = await harness.events(sessionId);
    const added = events.find(
      (event) => event.kind === 'message_added' && event.data.message.role === 'assistant',
    );
    const addedText = added?.kind === 'message_added' ? textOf(added.data.message) : '';
    expect(addedText.startsWith('START ')).toBe(true);
    expect(addedText).toMatch(/\[… 500010 more characters left out of this event\]$/);
    const completed = events.find((event) => event.kind === 'run_completed');
    expect(completed?.kind === 'run_completed' && completed.data.result.length).toBeLessThan(
      eventStringLimit + 100,
    );
  });

  it('a chat entry over its bound is refused with entry_too_large, and nothing of it is stored', async () => {
    harness = new Harness({ script: { replies: [{ text: 'ok' }] } });
    const input = 'y'.repeat(maxChatEntryChars + 1);
    await expect(harness.engine.startRun({ input })).rejects.toMatchObject({
      code: 'entry_too_large',
      message: expect.stringContaining(`over the ${maxChatEntryChars} a chat entry may hold`),
    });
    let stored = 0;
    for (const key of await harness.redis.keys(`${harness.prefix}:*`)) {
      stored += Number((await harness.redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
    }
    expect(stored).toBeLessThan(100_000);
  });
});
