import { describe, expect, it } from 'vitest';
import { boundEventData, eventStringLimit } from '../../src/events/event.js';

describe('the strings of an event are bounded', () => {
  it('hands back the very data when nothing is over the limit', () => {
    const data = {
      message: { parts: [{ type: 'text', text: 'hi' }], metadata: { n: 1, list: [1, 'a', null] } },
    };
    expect(boundEventData(data)).toBe(data);
  });

  it('cuts a long string wherever it is, copying only what leads to it', () => {
    const long = 'x'.repeat(eventStringLimit + 5);
    const untouched = { a: 'short' };
    const data = {
      untouched,
      parts: [
        { type: 'text', text: 'short' },
        { type: 'text', text: long },
      ],
      n: 3,
    };
    const bounded = boundEventData(data);
    expect(bounded).not.toBe(data);
    expect(bounded.untouched).toBe(untouched);
    expect(bounded.parts[0]).toBe(data.parts[0]);
    expect(bounded.parts[1]?.text).toBe(
      `${long.slice(0, eventStringLimit)}\n[… 5 more characters left out of this event]`,
    );
    // The original is left as it was.
    expect(data.parts[1]?.text).toBe(long);
    expect(bounded.n).toBe(3);
  });

  it('leaves an image part whole: its data is not text', () => {
    const image = { type: 'image', data: 'A'.repeat(eventStringLimit + 1), media_type: 'image/png' };
    const data = { parts: [image] };
    expect(boundEventData(data)).toBe(data);
  });
});
