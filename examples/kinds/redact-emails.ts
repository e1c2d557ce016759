// The effect of examples/email-redaction-effect.ts, in a module of its own so that a crash test's workers
// (test/extensions/fixtures/custom-kinds-worker.ts) register the same definition.
import { z } from 'zod';
import { defineEffect, type Message } from '../../src/index.js';

const emailAddress = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;

/** Before every model call of an agent that lists it: addresses in text and tool results are replaced. */
export const redactEmails = defineEffect({
  kind: 'redact_emails',
  options: z.strictObject({ replacement: z.string().default('[email removed]') }),
  plan: (view, { options }) => ({
    kind: 'messages',
    messages: view.messages.map(
      (message): Message => ({
        ...message,
        parts: message.parts.map((part) => {
          if (part.type === 'text')
            return { ...part, text: part.text.replace(emailAddress, options.replacement) };
          if (part.type === 'tool_result')
            return { ...part, content: part.content.replace(emailAddress, options.replacement) };
          return part;
        }),
      }),
    ),
  }),
});
