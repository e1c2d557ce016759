import type { z } from 'zod';

/** Renders zod issues as `path: message` lines a person or a model can act on. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.length === 0 ? '(root)' : formatPath(issue.path);
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

/** A path as it is written in config and JSON: `agents[0].options.max_iterations`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text;
}
