export { isStepControl, type PreparedCall, prepareToolCall, runToolHandler } from './execute-tool-call.js';
export {
  type FileChange,
  type FileChanges,
  fileChangeCollector,
  lineStat,
  maxFileChangesPerCall,
} from './file-change.js';
export { askProblem, interactionLimits, progressProblem } from './interaction-limits.js';
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
  type RunContextRequest,
  type RunContextSource,
  type ToolBox,
  toolDefinitions,
} from './toolbox.js';
