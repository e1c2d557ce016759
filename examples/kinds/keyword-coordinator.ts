// The coordinator of examples/keyword-coordinator.ts, in a module of its own so that a crash test's workers
// (test/extensions/fixtures/custom-kinds-worker.ts) register the same definition.
import { z } from 'zod';
import { defineCoordinator } from '../../src/index.js';

/** Turn 0: the first member whose role appears in the task (or `fallback_role`'s); then done. */
export const keywordCoordinator = defineCoordinator({
  kind: 'keyword',
  options: z.strictObject({ fallback_role: z.string().min(1) }),
  select: (view, { options }) => {
    if (view.turn > 0) return { done: true };
    const task = view.lastText.toLowerCase();
    const member =
      view.team.members.find((candidate) => task.includes(candidate.role.toLowerCase())) ??
      view.team.members.find((candidate) => candidate.role === options.fallback_role);
    return member ? { act: [member.agent] } : { fail: `no member has the role "${options.fallback_role}"` };
  },
});
