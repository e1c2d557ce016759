import type { z } from 'zod';
import type { JsonValue } from './tool.js';

/** What a tool call produced, as the model will see it. */
export interface ToolOutcome {
  content: string;
  isError: boolean;
}

/** Renders zod issues as `path: message` lines the model can act on. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.length === 0 ? '(root)' : formatPath(issue.path);
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text;
}

export function renderToolOutput(output: string | JsonValue | undefined): string {
  if (typeof output === 'string') return output;
  if (output === undefined) return '';
  return JSON.stringify(output);
}
