import { z } from 'zod';
import { duration, integer, maxHourMs, withDefault } from '../schemas/index.js';

/**
 * What a webhook may subscribe to: a run's end (`run_completed`, `run_failed`, `run_cancelled`) and a question
 * to a person, by its kind (`ask_user`, `approval_requested` for a tool call awaiting approval,
 * `budget_requested` for a run asking for more budget). Child runs (delegations) send theirs too.
 */
export const webhookEventTypes = [
  'run_completed',
  'run_failed',
  'run_cancelled',
  'ask_user',
  'approval_requested',
  'budget_requested',
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];

const webhookIdPattern = /^[a-zA-Z][\w-]{0,63}$/;
/** A Standard Webhooks secret: `whsec_` and the base64 of 24 to 64 random bytes. */
const secretPattern = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

function secretProblem(secret: string): string | undefined {
  if (!secretPattern.test(secret)) {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's ${VAR} syntax, shown as it is written
    return 'must be "whsec_" followed by base64 (e.g. whsec_$(openssl rand -base64 32)); put it in an environment variable and write secret: ${WEBHOOK_SECRET}';
  }
  const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64').length;
  if (bytes < 24 || bytes > 64) return `must hold 24 to 64 bytes after "whsec_" (it holds ${bytes})`;
  return undefined;
}

function urlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute http or https URL, such as https://hooks.example.com/ratchet';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `must use http or https, not ${url.protocol}`;
  if (url.username !== '' || url.password !== '') {
    return 'must not hold credentials: the signature (secret) authenticates the delivery';
  }
  return undefined;
}

export const webhookConfigSchema = z.strictObject({
  /** Names the webhook in deliveries and logs; default `webhook-<position from 1>`. */
  id: z
    .string()
    .regex(webhookIdPattern, {
      error: 'must start with a letter and hold at most 64 letters, digits, "_" and "-"',
    })
    .optional(),
  url: z
    .string()
    .max(2048, { error: 'must be at most 2048 characters' })
    .superRefine((url, context) => {
      const problem = urlProblem(url);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    }),
  events: z
    .array(z.enum(webhookEventTypes, { error: `must be one of ${webhookEventTypes.join(', ')}` }))
    .min(1, { error: `name at least one event: ${webhookEventTypes.join(', ')}` })
    .refine((events) => new Set(events).size === events.length, { error: 'names an event twice' }),
  /** The signing secret (Standard Webhooks): registered as a secret, so it never appears in a log. */
  secret: z.string().superRefine((secret, context) => {
    const problem = secretProblem(secret);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  }),
  /** Deliver to a loopback, private or link-local address (refused by default, as for http_request). */
  allow_private: withDefault(z.boolean(), false),
  /** The first retry's delay; each further one doubles it, up to an hour, for at least 24 hours. */
  retry_base_ms: withDefault(duration(10, maxHourMs, '1 hour'), 5_000),
  /** How long one delivery attempt may take, connection and response included. */
  timeout_ms: withDefault(duration(100, 60_000, '60 seconds'), 10_000),
  /** The most bytes of a receiver's response read (for the delivery's record); the rest is dropped. */
  max_response_bytes: withDefault(integer(0, 65_536), 4_096),
});

export type WebhookConfig = z.output<typeof webhookConfigSchema>;

/** The id of the webhook at `index` of the config's list: its own, or `webhook-<index + 1>`. */
export function webhookIdOf(webhook: WebhookConfig, index: number): string {
  return webhook.id ?? `webhook-${index + 1}`;
}

/** The config's `webhooks`: at most 32, with distinct ids. */
export const webhooksSchema = z
  .array(webhookConfigSchema)
  .max(32, { error: 'at most 32 webhooks' })
  .superRefine((webhooks, context) => {
    const seen = new Map<string, number>();
    webhooks.forEach((webhook, index) => {
      const id = webhookIdOf(webhook, index);
      const first = seen.get(id);
      if (first === undefined) seen.set(id, index);
      else {
        context.addIssue({
          code: 'custom',
          path: [index, 'id'],
          message: `"${id}" is already the id of webhooks[${first}]: give each webhook its own id`,
        });
      }
    });
  });
