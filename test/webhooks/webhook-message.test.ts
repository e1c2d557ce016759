import { describe, expect, it } from 'vitest';
import type { RatchetEvent } from '../../src/events/event.js';
import {
  deliveryAttempts,
  maxRetryDelayMs,
  retryDelayMs,
  retryWindowMs,
  webhookPayload,
  webhookTypeOf,
} from '../../src/worker/webhooks/webhook-message.js';

function question(kind: 'ask_user' | 'approval' | 'budget'): RatchetEvent {
  return {
    v: 1,
    id: '1700000000000-0',
    kind: 'ask_user',
    run_id: 'run_1',
    agent: 'assistant',
    time: '2026-01-01T00:00:00.000Z',
    data: { question_id: 'q1', kind, question: 'ok?', options: [], tool: null, timeout_at: null },
  };
}

describe('webhook messages', () => {
  it('hears a question by its kind, and no other event than run ends and questions', () => {
    expect(webhookTypeOf(question('ask_user'))).toBe('ask_user');
    expect(webhookTypeOf(question('approval'))).toBe('approval_requested');
    expect(webhookTypeOf(question('budget'))).toBe('budget_requested');
    const started = { ...question('ask_user'), kind: 'run_started', data: { input: 'x' } } as RatchetEvent;
    expect(webhookTypeOf(started)).toBeUndefined();
  });

  it('builds the same body from the same event, shaped type/timestamp/data', () => {
    const event = question('approval');
    const body = webhookPayload('approval_requested', event, 'ses_0123456789abcdef');
    expect(webhookPayload('approval_requested', event, 'ses_0123456789abcdef')).toBe(body);
    expect(JSON.parse(body)).toMatchObject({
      type: 'approval_requested',
      timestamp: event.time,
      data: { session_id: 'ses_0123456789abcdef', run_id: 'run_1', event_id: event.id, question_id: 'q1' },
    });
  });

  it('doubles the delay from the base up to an hour, and retries for at least 24 hours', () => {
    expect([1, 2, 3, 4].map((attempts) => retryDelayMs(5_000, attempts))).toEqual([
      5_000, 10_000, 20_000, 40_000,
    ]);
    expect(retryDelayMs(5_000, 40)).toBe(maxRetryDelayMs);
    for (const base of [10, 50, 5_000, 3_600_000]) {
      const attempts = deliveryAttempts(base);
      let waited = 0;
      for (let made = 1; made < attempts; made++) waited += retryDelayMs(base, made);
      expect(waited).toBeGreaterThanOrEqual(retryWindowMs);
      expect(waited - retryDelayMs(base, attempts - 1)).toBeLessThan(retryWindowMs);
    }
    expect(deliveryAttempts(5_000)).toBeLessThan(40);
  });
});
