import type { JsonValue } from './tool.js';

/** What a tool call produced, as the model will see it. */
export interface ToolOutcome {
  content: string;
  isError: boolean;
}

export function renderToolOutput(output: string | JsonValue | undefined): string {
  if (typeof output === 'string') return output;
  if (output === undefined) return '';
  return JSON.stringify(output);
}
