import { z } from 'zod';
import { type BaseProviderConfig, knownProviderKinds, providerKind } from '../models/provider-registry.js';
import { MAX_MAX_REPLY_CHARS, MIN_MAX_REPLY_CHARS } from '../models/reply-limit.js';
import { duration, maxDayMs } from '../schemas/index.js';
import { allowedKeys, configErrorMap, unknownKeyMessage } from './config-issues.js';
import { didYouMean } from './suggest.js';

/** A provider entry: the base fields plus the kind's own fields, as its `fieldsSchema` parsed them. */
export type ProviderConfig = BaseProviderConfig & Record<string, unknown>;

/** Limits shared by every worker (requests and tokens per minute; 0 = none) and retries of this provider. */
export const rateLimitConfigSchema = z.strictObject({
  rpm: z.int().min(0).default(0),
  input_tpm: z.int().min(0).default(0),
  output_tpm: z.int().min(0).default(0),
  /** Retries of a request the provider refused (429, 5xx, network) before the iteration fails. */
  max_retries: z.int().min(0).optional(),
  /** Base of the exponential backoff between those retries. */
  base_delay_ms: duration(0, maxDayMs, '1 day').optional(),
  /** The window the per-minute limits apply to; only tests and unusual providers change it. */
  window_ms: duration(100, maxDayMs, '1 day').default(60_000),
});
export type RateLimitConfig = z.output<typeof rateLimitConfigSchema>;

/** Fields every kind has; the engine uses them (the kind's adapter gets them too). */
const baseFields = {
  name: z.string().min(1),
  kind: z.string().min(1),
  model: z.string().min(1),
  rate_limit: rateLimitConfigSchema.optional(),
  /**
   * The most characters a model reply may hold, text and tool arguments together; absent, the default
   * (DEFAULT_MAX_REPLY_CHARS in models/reply-limit.ts).
   */
  max_reply_chars: z
    .int()
    .min(MIN_MAX_REPLY_CHARS, `max_reply_chars must be at least ${MIN_MAX_REPLY_CHARS}`)
    .max(MAX_MAX_REPLY_CHARS, `max_reply_chars may be at most ${MAX_MAX_REPLY_CHARS}`)
    .optional(),
};
const baseSchema = z.looseObject(baseFields);

/**
 * Validates one provider entry: the base fields, then everything else with the registered kind's
 * `fieldsSchema` (looked up at parse time, so kinds registered after import count). Both halves are checked
 * even when the other fails, so every problem in the entry is reported at once.
 */
export const providerConfigSchema = z.transform((input: unknown, context): ProviderConfig => {
  const base = baseSchema.safeParse(input, { error: configErrorMap });
  if (!base.success) addIssues(context, base.error.issues, []);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return invalid(input);

  const {
    name: _name,
    kind,
    model: _model,
    rate_limit: _rateLimit,
    max_reply_chars: _maxReplyChars,
    ...fields
  } = input as Record<string, unknown>;
  // A missing or empty kind was reported by the base schema.
  if (typeof kind !== 'string' || kind === '') return invalid(input);
  const definition = providerKind(kind);
  if (definition === undefined) {
    const known = knownProviderKinds();
    context.addIssue({
      code: 'custom',
      path: ['kind'],
      message:
        `unknown provider kind "${kind}"${didYouMean(kind, known)}; ` +
        `known kinds: ${known.length > 0 ? known.join(', ') : '(none registered)'}`,
    });
    return invalid(input);
  }
  const parsed = definition.fieldsSchema.safeParse(fields, { error: configErrorMap });
  if (!parsed.success) {
    addIssues(context, parsed.error.issues, [
      ...Object.keys(baseFields),
      ...allowedKeys(definition.fieldsSchema),
    ]);
  }
  if (!base.success || !parsed.success) return invalid(input);
  const { name, model, rate_limit, max_reply_chars } = base.data;
  return {
    ...parsed.data,
    name,
    kind,
    model,
    ...(rate_limit ? { rate_limit } : {}),
    ...(max_reply_chars === undefined ? {} : { max_reply_chars }),
  };
});

/** The value of a failed parse is never used: zod reports the issues instead. */
function invalid(input: unknown): ProviderConfig {
  return input as ProviderConfig;
}

function addIssues(
  context: z.core.$RefinementCtx,
  issues: readonly z.core.$ZodIssue[],
  allowed: readonly string[],
): void {
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        context.addIssue({
          code: 'custom',
          path: [...issue.path, key],
          message: unknownKeyMessage(key, allowed),
        });
      }
    } else {
      context.addIssue({ code: 'custom', path: [...issue.path], message: issue.message });
    }
  }
}
