import { describe, expect, it } from 'vitest';
import type { Part } from '../../src/chat/index.js';
import { assignToolCallIds, decideReply } from '../../src/workflows/core/reply-decision.js';

const call = (id: string, name = 'calculate'): Part => ({ type: 'tool_call', id, name, arguments: '{}' });

describe('assignToolCallIds', () => {
  it('keeps the ids the provider sent and the other parts untouched', () => {
    const parts: Part[] = [{ type: 'text', text: 'thinking' }, call('toolu_a'), call('toolu_b')];
    const assigned = assignToolCallIds(parts, 3);
    expect(assigned).toEqual(parts);
    expect(assigned[0]).toBe(parts[0]);
    expect(assigned[1]).toBe(parts[1]);
  });

  it('fills empty and blank ids as call_<iteration>_<index of the call>', () => {
    const parts: Part[] = [{ type: 'text', text: 'x' }, call(''), call('given'), call('  ')];
    const ids = assignToolCallIds(parts, 4).map((part) => (part.type === 'tool_call' ? part.id : part.type));
    expect(ids).toEqual(['text', 'call_4_0', 'given', 'call_4_2']);
  });

  it('replaces a repeated id, keeping the first', () => {
    const ids = assignToolCallIds([call('same'), call('same'), call('same')], 2).map((part) =>
      part.type === 'tool_call' ? part.id : '',
    );
    expect(ids).toEqual(['same', 'call_2_1', 'call_2_2']);
  });

  it('is deterministic: the same reply gets the same ids every time', () => {
    const parts: Part[] = [call(''), call(''), call('dup'), call('dup')];
    expect(assignToolCallIds(parts, 7)).toEqual(assignToolCallIds(parts, 7));
    const ids = assignToolCallIds(parts, 7).map((part) => (part.type === 'tool_call' ? part.id : ''));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('does not change the input', () => {
    const parts: Part[] = [call('')];
    assignToolCallIds(parts, 1);
    expect(parts).toEqual([call('')]);
  });
});

describe('decideReply', () => {
  it('a reply without tool calls is final, with its text as the result', () => {
    const parts: Part[] = [
      { type: 'text', text: 'The answer' },
      { type: 'text', text: 'is 42.' },
    ];
    expect(decideReply(parts, 1, 5)).toEqual({ kind: 'final', result: 'The answer\nis 42.' });
  });

  it('a final answer at max_iterations is still final', () => {
    expect(decideReply([{ type: 'text', text: 'done' }], 5, 5)).toEqual({ kind: 'final', result: 'done' });
  });

  it('a reply with tool calls asks for the tools, in order', () => {
    const parts: Part[] = [{ type: 'text', text: 'let me check' }, call('a', 'one'), call('b', 'two')];
    const decision = decideReply(parts, 4, 5);
    expect(decision).toEqual({ kind: 'tools', calls: [parts[1], parts[2]] });
  });

  it('tool calls at max_iterations fail the run with a message naming max_iterations', () => {
    const decision = decideReply([call('a', 'search'), call('b', 'fetch')], 5, 5);
    expect(decision.kind).toBe('failed');
    if (decision.kind !== 'failed') return;
    expect(decision.code).toBe('max_iterations');
    expect(decision.message).toContain('max_iterations (5)');
    expect(decision.message).toContain('search, fetch');
  });
});

describe('assignToolCallIds with colliding ids', () => {
  it('never makes up an id the provider already used in the reply', () => {
    const parts = assignToolCallIds(
      [
        { type: 'tool_call', id: 'call_1_1', name: 'a', arguments: '{}' },
        { type: 'tool_call', id: '', name: 'b', arguments: '{}' },
        { type: 'tool_call', id: 'call_1_1', name: 'c', arguments: '{}' },
      ],
      1,
    );
    const ids = parts.map((part) => (part.type === 'tool_call' ? part.id : ''));
    expect(new Set(ids).size).toBe(3);
    expect(ids[0]).toBe('call_1_1');
  });
});

describe('decideReply with a rejected answer', () => {
  const answer: Part[] = [{ type: 'text', text: 'the answer' }];
  const failure = {
    check: 'output_guardrail',
    reason: 'too vague',
    on_fail: 'retry' as const,
    max_retries: 1,
  };

  it('accepts an answer nothing rejected, sends a rejected one back, and fails once the retries are used up', () => {
    expect(decideReply(answer, 1, 5)).toEqual({ kind: 'final', result: 'the answer' });
    const retry = decideReply(answer, 1, 5, { failure, retriesSoFar: 0 });
    expect(retry).toMatchObject({ kind: 'retry', feedback: expect.stringContaining('too vague') });
    expect(decideReply(answer, 2, 5, { failure, retriesSoFar: 1 })).toMatchObject({
      kind: 'failed',
      code: 'guardrail_failed',
    });
    // No iteration left to answer again: the run fails instead of asking for one more.
    expect(decideReply(answer, 5, 5, { failure, retriesSoFar: 0 })).toMatchObject({
      kind: 'failed',
      code: 'guardrail_failed',
      message: expect.stringContaining('max_iterations'),
    });
  });

  it('fails the run at once, naming the check, when the rejection allows no retry', () => {
    const once = { check: 'judge', reason: 'off topic', on_fail: 'fail' as const, max_retries: 0 };
    expect(decideReply(answer, 1, 5, { failure: once, retriesSoFar: 0 })).toEqual({
      kind: 'failed',
      code: 'guardrail_failed',
      message: 'the final answer failed judge: off topic',
    });
  });

  it('decides only final answers: tool calls go on', () => {
    expect(decideReply([call('a')], 1, 5, { failure, retriesSoFar: 0 })).toMatchObject({ kind: 'tools' });
  });
});
