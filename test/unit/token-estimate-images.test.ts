import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/chat/index.js';
import { estimateMessageTokens, imageTokens } from '../../src/models/token-estimate.js';

const result = (images: number): Message => ({
  id: 'm1',
  sender: 'browser_screenshot',
  role: 'tool',
  parts: [
    {
      type: 'tool_result',
      tool_call_id: 'call_1',
      content: '{"url":"http://example.com/"}',
      is_error: false,
      ...(images > 0
        ? { images: Array.from({ length: images }, () => ({ data: 'AAAA', media_type: 'image/png' })) }
        : {}),
    },
  ],
  metadata: {},
  created_at: '2025-01-01T00:00:00.000Z',
});

describe('estimateMessageTokens', () => {
  it('counts the images of a tool result (a screenshot) at the flat image rate', () => {
    expect(estimateMessageTokens(result(2)) - estimateMessageTokens(result(0))).toBe(2 * imageTokens);
  });
});
