import { describe, expect, it } from 'vitest';
import type { ToolResultPart } from '../../../src/chat/index.js';
import { estimateMessagesTokens } from '../../../src/models/token-estimate.js';
import { requestTokens } from '../../../src/workflows/core/effects/index.js';
import { conversation } from './conversation.js';

describe('the token count of a request', () => {
  const first = conversation('Task.', [{ tool: 'ls', result: 'a'.repeat(400) }]);
  const second = conversation('Task.', [
    { tool: 'ls', result: 'a'.repeat(400) },
    { tool: 'cat', result: 'b'.repeat(800) },
  ]);

  it('is the estimate alone without a previous request (or when the provider reported no usage)', () => {
    // 'Task.' 2 + 4; call "ls{}" 1 + 4; result 100 + 4.
    expect(requestTokens(first, undefined)).toBe(115);
    expect(requestTokens(first, { input_tokens: 0, sent_estimate: 115 })).toBe(115);
  });

  it("is the provider's count of the previous request plus the estimate of what was added since", () => {
    const added = estimateMessagesTokens(second.slice(first.length));
    // call "cat{}" 2 + 4; result 200 + 4.
    expect(added).toBe(6 + 204);
    expect(requestTokens(second, { input_tokens: 1500, sent_estimate: 115 })).toBe(1500 + added);
  });

  it('goes down by the estimate of what effects took away from the messages sent before', () => {
    const trimmed = second.map((message, index) =>
      index === 2
        ? { ...message, parts: [{ ...(message.parts[0] as ToolResultPart), content: 'a' }] }
        : message,
    );
    expect(requestTokens(trimmed, { input_tokens: 1500, sent_estimate: 115 })).toBe(1500 + 210 - 99);
  });
});
