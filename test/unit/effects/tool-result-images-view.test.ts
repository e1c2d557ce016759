import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/chat/index.js';
import { maskObservations, trimToolResults } from '../../../src/workflows/core/effects/view-transforms.js';

const at = '2025-01-01T00:00:00.000Z';
const screenshot = { data: 'AAAA', media_type: 'image/png' };

/** Two rounds of a browser_screenshot call and its result (with an image). */
function chat(): Message[] {
  return [1, 2].flatMap((round): Message[] => [
    {
      id: `a${round}`,
      sender: 'agent',
      role: 'assistant',
      parts: [{ type: 'tool_call', id: `call_${round}`, name: 'browser_screenshot', arguments: '{}' }],
      metadata: {},
      created_at: at,
    },
    {
      id: `t${round}`,
      sender: 'browser_screenshot',
      role: 'tool',
      parts: [
        {
          type: 'tool_result',
          tool_call_id: `call_${round}`,
          content: `page ${round}`,
          is_error: false,
          images: [screenshot],
        },
      ],
      metadata: {},
      created_at: at,
    },
  ]);
}

const resultOf = (messages: Message[], id: string) => messages.find((message) => message.id === id)?.parts[0];

describe('shrinking effects and the images of tool results', () => {
  it('trim_tool_results leaves out the images of older results, and keeps the newest whole', () => {
    const trimmed = trimToolResults(chat(), { preserve_recent: 1, max_result_length: 1_000 });
    expect(resultOf(trimmed, 't1')).toEqual({
      type: 'tool_result',
      tool_call_id: 'call_1',
      content: 'page 1\n[1 image(s) left out to save context]',
      is_error: false,
    });
    expect(resultOf(trimmed, 't2')).toMatchObject({ content: 'page 2', images: [screenshot] });
  });

  it('observation_mask leaves them out too', () => {
    const masked = maskObservations(chat(), { threshold: 0.6, recent_window: 1 });
    expect(resultOf(masked, 't1')).not.toHaveProperty('images');
    expect(resultOf(masked, 't2')).toMatchObject({ images: [screenshot] });
  });
});
