import type { AnyContractRule } from './contract-rule.js';
import type { CoordinatorDefinition, StopConditionDefinition } from './coordinator-definition.js';
import type { EffectDefinition } from './effect-definition.js';
import type { AnyMiddleware } from './middleware.js';

/**
 * What a program adds to Ratchet in code (docs/extending.md): given to `loadConfig` (so the config may name
 * them) and to `RatchetWorker` (which runs them). Each kind's name must be new: a built-in name is taken.
 */
export interface Extensions {
  /** Effect kinds (defineEffect), named in agents' `effects`. */
  readonly effects?: readonly EffectDefinition[];
  /** Coordinator kinds (defineCoordinator), named in teams' `coordinator.kind`. */
  readonly coordinators?: readonly CoordinatorDefinition[];
  /** Stop conditions (defineStopCondition), named in `round_robin_until` teams' `until`. */
  readonly stopConditions?: readonly StopConditionDefinition[];
  /** Middleware (defineMiddleware), named in agents' `middleware`. */
  readonly middleware?: readonly AnyMiddleware[];
  /** Contract rule kinds (defineContractRule), named in contracts' `schema.rules` as `{kind, field?, params?}`. */
  readonly contractRules?: readonly AnyContractRule[];
}
