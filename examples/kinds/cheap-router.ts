// The middleware of examples/cheap-router-middleware.ts, in a module of its own so that a crash test's
// workers (test/extensions/fixtures/custom-kinds-worker.ts) register the same definition.
import { z } from 'zod';
import { defineMiddleware, type ModelRequest } from '../../src/index.js';

/** Characters of text in what the model would be sent, instructions included. */
function requestChars(request: ModelRequest): number {
  let chars = 0;
  for (const message of request.messages)
    for (const part of message.parts) if (part.type === 'text') chars += part.text.length;
  return chars;
}

/**
 * Around every model call of an agent that lists it: a request of at most `max_chars` characters goes to
 * `cheap_provider` (another entry of the config's `providers`, the same API with a cheaper model).
 */
export const cheapRouter = defineMiddleware({
  name: 'cheap_router',
  options: z.strictObject({
    cheap_provider: z.string().min(1),
    max_chars: z.number().int().positive().default(200),
  }),
  async aroundModelCall(call, next) {
    const chars = requestChars(call.request);
    const cheap = chars <= call.options.max_chars;
    // Recorded with the reply: what was chosen, and why.
    call.record({ chose: cheap ? 'cheap' : 'default', chars });
    return next(cheap ? { ...call.request, provider: call.options.cheap_provider } : call.request);
  },
});
