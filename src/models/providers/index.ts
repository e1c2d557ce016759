export { builtInContextWindows, type ContextWindowOptions, resolveContextWindow } from './context-window.js';
export {
  DEFAULT_FIRST_TOKEN_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
  type HostedProviderFields,
  hostedProviderFieldsSchema,
  type OpenAICompatibleFields,
  openaiCompatibleFieldsSchema,
} from './provider-fields.js';
export { createSdkCompleter, type SdkCompleterOptions } from './sdk-completer.js';
export {
  anthropicProviderKind,
  geminiProviderKind,
  grokProviderKind,
  openaiCompatibleProviderKind,
  openaiProviderKind,
} from './sdk-provider-kinds.js';
