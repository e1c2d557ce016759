import { z } from 'zod';
import { defineEffect } from '../../src/index.js';

/**
 * An effect with an after phase only: when the agent's final answer is short, it notes so for the person
 * reading the transcript, emits a `progress` event saying why, and asks for a compaction when the request
 * that made the answer used most of the context window. It decides from the recorded reply and its context
 * alone, so the decision recorded with the reply is the one any worker would make.
 */
export const answerReview = defineEffect({
  kind: 'answer_review',
  options: z.strictObject({ min_words: z.number().int().min(1).default(5) }),
  after: (view, context) => {
    if (view.decision !== 'final') return undefined;
    const text = view.reply.parts.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
    const words = text.split(/\s+/).filter((word) => word !== '').length;
    if (words >= context.options.min_words) return undefined;
    context.notify({
      kind: 'progress',
      data: { fraction: null, message: `${context.agent} answered in ${words} words` },
    });
    return {
      note: { words },
      message: {
        role: 'user',
        sender: 'reviewer',
        parts: [{ type: 'text', text: `The answer has ${words} words; ask for more detail if needed.` }],
      },
      compact: context.contextWindow > 0 && view.tokens > 0.8 * context.contextWindow,
    };
  },
});
