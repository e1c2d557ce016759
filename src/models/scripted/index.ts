export { loadScript, parseScript } from './load-script.js';
export {
  type Script,
  type ScriptedFailure,
  type ScriptedReply,
  type ScriptedRule,
  type ScriptedToolCall,
  scriptSchema,
} from './script-schema.js';
export { createScriptedCompleter, type ScriptedCompleterOptions } from './scripted-completer.js';
export {
  type ScriptedProviderFields,
  scriptedFieldsSchema,
  scriptedProviderKind,
} from './scripted-provider-kind.js';
