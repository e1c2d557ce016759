import { z } from 'zod';

/**
 * The script of the scripted model. Nothing here has defaults or transforms, so a script written in code
 * has the same type as one parsed from a file.
 */

export const scriptedToolCallSchema = z
  .strictObject({
    name: z.string().min(1),
    /** Serialized to JSON for the tool_call part. */
    arguments: z.record(z.string(), z.unknown()).optional(),
    /** Used verbatim, so a script can send invalid JSON. */
    arguments_raw: z.string().optional(),
    /** Used verbatim; without it the call gets `call_<position>_<index>`. */
    id: z.string().min(1).optional(),
  })
  .refine((call) => call.arguments === undefined || call.arguments_raw === undefined, {
    message: 'give `arguments` or `arguments_raw`, not both',
  });

const message = z.string().min(1).optional();

/** An injected failure, shaped like what a real provider would make of the matching API error. */
export const scriptedFailureSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('rate_limit'),
    retry_after_ms: z.number().int().nonnegative().optional(),
    message,
  }),
  z.strictObject({
    kind: z.literal('server_error'),
    status: z.number().int().min(500).max(599).optional(),
    message,
  }),
  z.strictObject({
    kind: z.literal('auth'),
    status: z.union([z.literal(401), z.literal(403)]).optional(),
    message,
  }),
  /** A plain Error, as from a bug in a provider adapter: not a RatchetError. */
  z.strictObject({ kind: z.literal('exception'), message }),
]);

export const scriptedUsageSchema = z.strictObject({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cached_input_tokens: z.number().int().nonnegative().optional(),
});

export const scriptedReplySchema = z.strictObject({
  text: z.string().optional(),
  tool_calls: z.array(scriptedToolCallSchema).optional(),
  delay_ms: z.number().int().nonnegative().optional(),
  /** Attempt k (1-based, `context.attempt`) of this reply fails with `fail[k-1]`; later attempts reply. */
  fail: z.array(scriptedFailureSchema).optional(),
  usage: scriptedUsageSchema.optional(),
});

export const scriptedRuleSchema = z.strictObject({
  /** Tested against the latest user or tool message of the chat; every given condition must hold. */
  when: z.strictObject({
    role: z.enum(['user', 'tool', 'any']).optional(),
    contains: z.string().optional(),
    matches: z.string().refine(isRegExpSource, { message: 'not a valid regular expression' }).optional(),
  }),
  reply: scriptedReplySchema,
});

/** The fields of a script, shared with the inline form of the provider config. */
export const scriptShape = {
  /** Used in order: the position is the number of assistant messages already in the chat. */
  replies: z.array(scriptedReplySchema).optional(),
  /** Checked before `replies`; the first match wins. */
  rules: z.array(scriptedRuleSchema).optional(),
  /** The reply once `replies` is exhausted and no rule matches. */
  default: scriptedReplySchema.optional(),
  /**
   * The reply to a request for a summary of the chat (a compaction: docs/effects.md). Such requests never
   * take a reply of `replies` or `rules`. Default: one line naming the entries summarised.
   */
  summary: scriptedReplySchema.optional(),
};

export const scriptSchema = z.strictObject(scriptShape).refine(isNonEmptyScript, {
  message: 'the script is empty: give `replies`, `rules` or a `default`',
});

export type Script = z.infer<typeof scriptSchema>;
export type ScriptedReply = z.infer<typeof scriptedReplySchema>;
export type ScriptedRule = z.infer<typeof scriptedRuleSchema>;
export type ScriptedToolCall = z.infer<typeof scriptedToolCallSchema>;
export type ScriptedFailure = z.infer<typeof scriptedFailureSchema>;

export function isNonEmptyScript(script: {
  replies?: readonly unknown[] | undefined;
  rules?: readonly unknown[] | undefined;
  default?: unknown;
}): boolean {
  return (script.replies?.length ?? 0) > 0 || (script.rules?.length ?? 0) > 0 || script.default !== undefined;
}

function isRegExpSource(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}
