import type { z } from 'zod';
import type {
  AfterReplyContext,
  AfterReplyDecision,
  AfterReplyView,
  EffectContext,
  EffectDefinition,
  EffectPlan,
  EffectView,
} from './effect-definition.js';

/** The default priority of an effect: after the built-ins that shrink the request, before those that add. */
export const defaultEffectPriority = 50;

/**
 * Defines an effect kind (docs/extending.md, "Effects"): register it in `extensions.effects` and name it in
 * an agent's `effects: [{ kind, params }]`. `plan` runs before every model call of the agent, over the
 * request as the effects before it left it, and must decide from its view and context alone.
 * examples/email-redaction-effect.ts is one, run by its test.
 */
export function defineEffect<Schema extends z.ZodType>(definition: {
  kind: string;
  options: Schema;
  priority?: number;
  /** Before each model call; leave it out for an effect that only acts after the reply. */
  plan?(view: EffectView, context: EffectContext<z.output<Schema>>): EffectPlan;
  after?(view: AfterReplyView, context: AfterReplyContext<z.output<Schema>>): AfterReplyDecision;
}): EffectDefinition<z.output<Schema>> {
  return {
    kind: definition.kind,
    options: definition.options as z.ZodType<z.output<Schema>>,
    priority: definition.priority ?? defaultEffectPriority,
    plan: definition.plan ?? (() => undefined),
    ...(definition.after ? { after: definition.after } : {}),
  };
}
