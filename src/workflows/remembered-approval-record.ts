import { z } from 'zod';
import { defineRecordKind } from '../schemas/record-kinds.js';

/**
 * Remembered approvals (decision 0046), the records: a person approving a tool call may ask that the same
 * call not be asked again in the session. No Node modules here: the wire and the typed client use it.
 */

/** At most this many remembered approvals per session (an answer over it is refused). */
export const maxRememberedApprovals = 100;
/** The longest path prefix a remembered approval may hold, in characters. */
export const maxPathPrefixLength = 1_000;

/**
 * What an approval answer may ask to remember: `tool` (every call of this tool in the session), `arguments`
 * (calls of this tool with exactly these arguments, compared canonically), or `{path_prefix}` (calls of this
 * tool whose every path argument resolves inside the prefix).
 */
export const rememberSchema = z.union([
  z.enum(['tool', 'arguments']),
  z.strictObject({
    path_prefix: z
      .string()
      .min(1, 'remember.path_prefix is empty: give a folder such as "src/" or "/reports"')
      .max(maxPathPrefixLength, `remember.path_prefix is over ${maxPathPrefixLength} characters`)
      .refine((prefix) => !prefix.includes('\0'), 'remember.path_prefix holds a NUL character'),
  }),
]);
export type Remember = z.infer<typeof rememberSchema>;

/** One remembered approval of a session. Version 1. */
export const rememberedApprovalSchema = z.strictObject({
  v: z.literal(1),
  /** Stable id of the rule (the same rule remembered twice is one approval). */
  key: z.string(),
  tool: z.string(),
  scope: z.enum(['tool', 'arguments', 'path_prefix']),
  /** Canonical JSON of the approved arguments (scope arguments). */
  arguments: z.string().nullable(),
  /** The normalised prefix (scope path_prefix): absolute, no `.`/`..`, no trailing slash. */
  path_prefix: z.string().nullable(),
  /** The approval question whose answer remembered it. */
  question_id: z.string(),
  agent: z.string(),
  created_at: z.iso.datetime(),
});
export type RememberedApproval = z.infer<typeof rememberedApprovalSchema>;

defineRecordKind({ name: 'remembered_approval', version: 1, schema: rememberedApprovalSchema });
