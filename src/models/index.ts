import { registerProvider } from './provider-registry.js';
import { scriptedProviderKind } from './scripted/index.js';

export type {
  Completer,
  Completion,
  CompletionContext,
  CompletionOptions,
  CompletionRequest,
  ToolDefinition,
} from './completer.js';
export {
  type BaseProviderConfig,
  knownProviderKinds,
  type ProviderFactoryContext,
  type ProviderKind,
  providerKind,
  registerProvider,
} from './provider-registry.js';
export { createScriptedCompleter, loadScript, type Script } from './scripted/index.js';
export { addUsage, type Usage, usageSchema, zeroUsage } from './usage.js';

registerProvider('scripted', scriptedProviderKind);
