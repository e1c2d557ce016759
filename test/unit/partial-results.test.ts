import { describe, expect, it } from 'vitest';
import type { ToolCallPart } from '../../src/chat/index.js';
import { mergePartialResults } from '../../src/workflows/core/partial-results.js';

const call = (name: string, input: unknown, raw?: string): ToolCallPart => ({
  type: 'tool_call',
  id: `call-${Math.random()}`,
  name,
  arguments: raw ?? JSON.stringify(input),
});

describe('mergePartialResults', () => {
  it("merges each accepted report_progress call's data in order; a name again replaces its value in place", () => {
    const merged = mergePartialResults({ a: 1 }, [
      call('report_progress', { message: 'm', data: { b: [1], a: 'again' } }),
      call('add', { a: 1, b: 2 }),
      call('report_progress', { message: 'm', data: { c: null } }),
    ]);
    expect(merged).toEqual({ a: 'again', b: [1], c: null });
    expect(Object.keys(merged)).toEqual(['a', 'b', 'c']);
  });

  it('ignores calls the tool refuses: bad JSON, bad names, values over the bound, no message', () => {
    const current = { kept: true };
    expect(
      mergePartialResults(current, [
        call('report_progress', undefined, '{"message": "m", "data": {'),
        call('report_progress', { message: 'm', data: { 'no spaces': 1 } }),
        call('report_progress', { message: 'm', data: { big: 'x'.repeat(2_000) } }),
        call('report_progress', { data: { quiet: 1 } }),
      ]),
    ).toBe(current);
  });
});
