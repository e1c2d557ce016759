// The stop condition of examples/stop-predicate.ts, in a module of its own so that a crash test's workers
// (test/extensions/fixtures/custom-kinds-worker.ts) register the same definition.
import { z } from 'zod';
import { defineStopCondition } from '../../src/index.js';

/** Holds once the last message of the team's shared chat has at least `words` words. */
export const longEnough = defineStopCondition({
  name: 'long_enough',
  options: z.strictObject({ words: z.int().positive() }),
  holds: (view, { options }) => view.lastText.split(/\s+/).filter(Boolean).length >= options.words,
});
