export {
  decodeChatEntries,
  decodeChatEntry,
  encodeChatEntry,
  maxChatEntryChars,
} from './chat-entry.js';
export {
  type ContextSummary,
  type ContextView,
  contextViewSchema,
  emptyContextView,
} from './context-view.js';
export {
  type ImagePart,
  imagePartSchema,
  type Message,
  messageSchema,
  type Part,
  partSchema,
  type Role,
  roleSchema,
  type TextPart,
  type ToolCallPart,
  type ToolResultPart,
  textOf,
  textPartSchema,
  toolCallPartSchema,
  toolCallsOf,
  toolResultPartSchema,
  toolResultsOf,
} from './message.js';
