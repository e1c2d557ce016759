import { describe, expect, it } from 'vitest';
import { parseLenient } from '../../src/client/lenient-parse.js';
import { questionSchema, wireEventSchema } from '../../src/wire/index.js';

// The client reads answers and events with the server's strict wire schemas, leniently in one way only: a
// field a newer server added is dropped, anything else that does not fit still fails.

const question = {
  id: 'q_1',
  session_id: 'ses_0000000000000000',
  run_id: 'run_1',
  agent: 'agent',
  kind: 'approval',
  question: 'May I?',
  options: [],
  tool: { name: 'charge_card', tool_call_id: 'c1', arguments: '{}' },
  status: 'answered',
  answer: { decision: 'reject', reason: 'no' },
  answered_by: 'user',
  timeout_at: null,
  default_answer: null,
  created_at: '2026-01-01T00:00:00.000Z',
  answered_at: '2026-01-01T00:00:01.000Z',
};

const toolCallEnd = {
  id: '5-0',
  kind: 'tool_call_end',
  run_id: 'run_1',
  agent: 'agent',
  time: '2026-01-01T00:00:00.000Z',
  data: { iteration: 1, tool_call_id: 'c1', name: 'add', is_error: false, content: '3' },
};

describe('parseLenient with the server schemas', () => {
  it('drops fields a newer server adds, at any depth and inside a union, and keeps the rest', () => {
    const newer = {
      ...question,
      priority: 'high',
      tool: { ...question.tool, risk: 3 },
      answer: { ...question.answer, answered_via: 'slack' },
    };
    expect(questionSchema.safeParse(newer).success).toBe(false);
    const parsed = parseLenient(questionSchema, newer);
    expect(parsed.success && parsed.data).toEqual(question);
  });

  it('reads an event of a known kind with a field its data did not have', () => {
    const newer = { ...toolCallEnd, shard: 2, data: { ...toolCallEnd.data, duration_ms: 12 } };
    const parsed = parseLenient(wireEventSchema, newer);
    expect(parsed.success && parsed.data).toEqual(toolCallEnd);
  });

  it('still refuses what does not fit: a missing field, another type, an unknown enum value', () => {
    const { question: _question, ...missing } = question;
    expect(parseLenient(questionSchema, missing).success).toBe(false);
    expect(parseLenient(questionSchema, { ...question, options: 'a' }).success).toBe(false);
    expect(parseLenient(questionSchema, { ...question, kind: 'poll', extra: 1 }).success).toBe(false);
    const { content: _content, ...noContent } = toolCallEnd.data;
    expect(parseLenient(wireEventSchema, { ...toolCallEnd, data: { ...noContent, extra: 1 } }).success).toBe(
      false,
    );
  });
});
