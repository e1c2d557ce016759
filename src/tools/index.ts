export type { BrowserPageStore } from './builtin/browser/browser-page-store.js';
export { guardedHop } from './builtin/http/guarded-fetch.js';
export { classifyAddress } from './builtin/http/ip-ranges.js';
export { checkDestination, type Resolver, systemResolver } from './builtin/http/ssrf-guard.js';
export { reportProgressInputSchema } from './builtin/interaction-toolbox.js';
export type {
  MemoryLimits,
  MemoryScope,
  MemoryStore,
  MemoryWriteResult,
} from './builtin/memory/memory-store.js';
export type { NoteStore } from './builtin/session-data/note-store.js';
export type { StateStore } from './builtin/session-data/state-store.js';
export type { TaskStore } from './builtin/session-data/task-store.js';
export {
  type EventWaitRecord,
  type KeptEvent,
  keptEventSchema,
  type SleepRecord,
  type WaitRecord,
  type WaitStore,
  waitRecordSchema,
} from './builtin/waits/wait-store.js';
export { isStepControl, type PreparedCall, prepareToolCall, runToolHandler } from './execute-tool-call.js';
export {
  type FileChange,
  type FileChanges,
  fileChangeCollector,
  lineStat,
  maxFileChangesPerCall,
} from './file-change.js';
export { askProblem, interactionLimits, progressProblem } from './interaction-limits.js';
export { type ListedTool, listedToolSchema, type McpToolListings } from './mcp-tool-listings.js';
export { type PartialResults, partialResultLimits, partialResultsSchema } from './partial-results.js';
export type { SessionDataStore } from './session-data-store.js';
export {
  type AskOptions,
  type DelegatedTask,
  type DelegationResult,
  defineTool,
  type InterruptedPolicy,
  interruptedPolicyOf,
  type JsonValue,
  type SessionAccess,
  type SubGoalView,
  type Tool,
  type ToolContext,
  toolDefinitionOf,
} from './tool.js';
export {
  renderToolOutput,
  type ToolImage,
  type ToolOutcome,
  type ToolOutput,
  type ToolOutputWithImages,
  withImages,
} from './tool-result.js';
export {
  type AnyTool,
  createToolBox,
  findTool,
  type KeepNoteRequest,
  type RunContextRequest,
  type RunContextSource,
  type ToolBox,
  toolDefinitions,
} from './toolbox.js';
