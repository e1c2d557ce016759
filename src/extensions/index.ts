// The extension points (docs/extending.md) as the rest of Ratchet uses them: the contracts of effects,
// coordinators, stop conditions and middleware, the deterministic context every extension decides from, and
// the middleware chains. The built-ins are registrations on the same points (src/workflows/core); what users
// import is exported by the package's face, src/index.ts.

export { type ExtensionStep, extensionContext } from './context.js';
export {
  type AnyContractRule,
  type ContractRuleCall,
  type ContractRuleDefinition,
  type ContractRuleVerdict,
  defineContractRule,
} from './contract-rule.js';
export type {
  CoordinatorChoice,
  CoordinatorContext,
  CoordinatorDefinition,
  CoordinatorView,
  StopConditionDefinition,
} from './coordinator-definition.js';
export type {
  AfterReplyContext,
  AfterReplyDecision,
  AfterReplyMessage,
  AfterReplyQuestion,
  AfterReplyView,
  EffectContext,
  EffectDefinition,
  EffectEvent,
  EffectPlan,
  EffectView,
} from './effect-definition.js';
export type { Extensions } from './extensions.js';
export {
  type AnyMiddleware,
  type ConfiguredMiddleware,
  defineMiddleware,
  type ModelReply,
  rejectAnswer,
  type ToolResult,
} from './middleware.js';
export { type MiddlewareDecision, runModelChain, runToolChain } from './middleware-chain.js';
