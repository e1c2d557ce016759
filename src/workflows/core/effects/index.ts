export {
  applySummary,
  boundSummary,
  buildSummaryRequest,
  compactionCut,
  compactionDeclined,
  reactiveCompactionCut,
  type SummaryOutcome,
  type SummaryRequest,
  summaryBound,
  summaryInputShare,
} from './compaction.js';
export { isContextLengthError } from './context-length-error.js';
export { type CompactionEntry, compactionEntrySchema, summaryMessage, viewMessages } from './context-view.js';
export {
  builtinEffectDefinitions,
  builtinEffects,
  type EffectRegistry,
  effectRegistry,
  type ResolvedEffect,
} from './effect-kinds.js';
export { resolveEffects } from './effect-list.js';
export {
  type AfterPrevious,
  type ContextErrorPlan,
  type EffectEvent,
  type ModelCallInput,
  type ModelCallPlan,
  planAfterContextError,
  planModelCall,
} from './plan-model-call.js';
export { type PreviousRequest, requestTokens } from './request-tokens.js';
