import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { Remember, RememberedApproval } from './remembered-approval-record.js';

export * from './remembered-approval-record.js';

/**
 * Remembered approvals (decision 0046): a person approving a tool call may ask that the same call not be asked
 * again in the session. The rule is recorded with the answer, in the session's data; a later call of a tool
 * that requires approval is checked against the session's rules before a question is asked.
 */

/** JSON with the keys of every object sorted: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return Object.fromEntries(entries.map(([key, inner]) => [key, sortKeys(inner)]));
  }
  return value;
}

/**
 * A path as the workspace sees it: resolved against the workspace root (`/`), so `..` cannot climb out of
 * it and `a/../b` is `b`; no trailing slash. Undefined for what is not a usable path.
 */
export function normalizeWorkspacePath(path: string): string | undefined {
  if (path.length === 0 || path.includes('\0')) return undefined;
  return posix.resolve('/', path);
}

/** Whether `path` (normalised) is the prefix or inside it: `/a/b` holds `/a/b/c`, never `/a/bc`. */
function inside(prefix: string, path: string): boolean {
  return prefix === '/' || path === prefix || path.startsWith(`${prefix}/`);
}

/** Argument names that hold paths: `path`, `cwd`, `dir`, `directory`, and any name ending in `_path`. */
function isPathArgument(name: string): boolean {
  return ['path', 'cwd', 'dir', 'directory', 'paths'].includes(name) || name.endsWith('_path');
}

/** The path arguments of a call (top level; string values, or arrays of strings for `paths`). */
function pathArguments(args: Record<string, unknown>): unknown[] {
  return Object.entries(args)
    .filter(([name]) => isPathArgument(name))
    .flatMap(([, value]) => (Array.isArray(value) ? value : [value]));
}

function parseArguments(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The rule an approval answer asks to remember, for the call it approved. */
export function rememberedApprovalOf(
  remember: Remember,
  question: { id: string; agent: string; tool: { name: string; arguments: string } },
  now: string,
): RememberedApproval {
  const tool = question.tool.name;
  let scope: RememberedApproval['scope'];
  let args: string | null = null;
  let prefix: string | null = null;
  if (remember === 'tool') scope = 'tool';
  else if (remember === 'arguments') {
    scope = 'arguments';
    const parsed = parseArguments(question.tool.arguments);
    args = canonicalJson(parsed ?? question.tool.arguments);
  } else {
    scope = 'path_prefix';
    prefix = normalizeWorkspacePath(remember.path_prefix) ?? '/';
  }
  const key = createHash('sha256')
    .update(JSON.stringify([tool, scope, args, prefix]))
    .digest('hex')
    .slice(0, 20);
  return {
    v: 1,
    key,
    tool,
    scope,
    arguments: args,
    path_prefix: prefix,
    question_id: question.id,
    agent: question.agent,
    created_at: now,
  };
}

/**
 * Whether a remembered approval covers a call: the same tool, and for `arguments` the same canonical
 * arguments, for `path_prefix` at least one path argument and every one inside the prefix. Arguments that
 * do not parse match only a `tool` rule.
 */
export function approvalCovers(
  approval: RememberedApproval,
  call: { name: string; arguments: string },
): boolean {
  if (approval.tool !== call.name) return false;
  if (approval.scope === 'tool') return true;
  const args = parseArguments(call.arguments);
  if (!args) return false;
  if (approval.scope === 'arguments') return canonicalJson(args) === approval.arguments;
  const prefix = approval.path_prefix;
  if (prefix === null) return false;
  const paths = pathArguments(args);
  if (paths.length === 0) return false;
  return paths.every((path) => {
    if (typeof path !== 'string') return false;
    const normalized = normalizeWorkspacePath(path);
    return normalized !== undefined && inside(prefix, normalized);
  });
}

/** The first of a session's remembered approvals that covers a call (oldest first), if any. */
export function matchingApproval(
  approvals: readonly RememberedApproval[],
  call: { name: string; arguments: string },
): RememberedApproval | undefined {
  return [...approvals]
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.key.localeCompare(b.key))
    .find((approval) => approvalCovers(approval, call));
}
