import { registerProvider } from './provider-registry.js';
import {
  anthropicProviderKind,
  geminiProviderKind,
  grokProviderKind,
  openaiCompatibleProviderKind,
  openaiProviderKind,
} from './providers/index.js';
import { scriptedProviderKind } from './scripted/index.js';

export type {
  Completer,
  Completion,
  CompletionContext,
  CompletionOptions,
  CompletionRequest,
  RateLimitStatus,
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
export { builtInContextWindows, resolveContextWindow } from './providers/index.js';
export { DEFAULT_MAX_REPLY_CHARS, replyTooLarge, withReplyLimit } from './reply-limit.js';
export { createScriptedCompleter, loadScript, type Script } from './scripted/index.js';
export { addUsage, type Usage, usageSchema, zeroUsage } from './usage.js';

registerProvider('scripted', scriptedProviderKind);
registerProvider('anthropic', anthropicProviderKind);
registerProvider('openai', openaiProviderKind);
registerProvider('gemini', geminiProviderKind);
registerProvider('grok', grokProviderKind);
registerProvider('openai_compatible', openaiCompatibleProviderKind);
