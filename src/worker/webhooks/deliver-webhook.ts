import { type Job, UnrecoverableError } from 'bullmq';
import type { Webhook } from 'standardwebhooks';
import type { WebhookConfig } from '../../config/index.js';
import type { RedisClient } from '../../redis/connection.js';
import { type KeySpace, webhookBodyKey } from '../../redis/keys.js';
import { deliveryJobDataSchema } from '../../redis/webhook-deliveries.js';
import { parseRecord } from '../../schemas/parse.js';
import { checkDestination, classifyAddress, guardedHop, type Resolver } from '../../tools/index.js';

export interface ConfiguredWebhook {
  id: string;
  /** Its place in the config's list, for error messages (`webhooks[0]`). */
  index: number;
  config: WebhookConfig;
  signer: Webhook;
}

export interface DeliverOptions {
  webhooks: ReadonlyMap<string, ConfiguredWebhook>;
  commands: RedisClient;
  space: KeySpace;
  resolve: Resolver;
}

/** What a successful delivery returns (kept as the job's return value). */
export interface DeliveryOutcome {
  status: number;
  response: string;
}

/**
 * One attempt at a delivery: read its body (stored when it was enqueued), sign it (Standard Webhooks: `webhook-id`,
 * `webhook-timestamp`, `webhook-signature`) and POST it through the same SSRF guard as http_request. A 2xx
 * answer delivers it; anything else throws, and BullMQ retries with the webhook's backoff. What no retry can
 * change (a refused address, a webhook no longer configured, a body no longer stored) fails at once.
 */
export async function deliverWebhook(
  job: Job,
  signal: AbortSignal,
  options: DeliverOptions,
): Promise<DeliveryOutcome> {
  const data = parseRecord(deliveryJobDataSchema, job.data, `data of webhook delivery ${job.id}`);
  const webhook = options.webhooks.get(data.webhook);
  if (!webhook) {
    throw new UnrecoverableError(`webhook "${data.webhook}" is no longer in the config's webhooks`);
  }
  const body = await options.commands.get(webhookBodyKey(options.space, data.message_id));
  if (body === null) {
    throw new UnrecoverableError(
      `the body of event ${data.event_id} of session ${data.session_id} is no longer stored`,
    );
  }
  const { config } = webhook;
  const section = `webhooks[${webhook.index}]`;
  const timeout = AbortSignal.timeout(config.timeout_ms);
  const attemptSignal = AbortSignal.any([signal, timeout]);
  await refusePrivate(config, section, options.resolve, attemptSignal);
  const timestamp = new Date();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'ratchet-webhooks',
    'webhook-id': data.message_id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': webhook.signer.sign(data.message_id, timestamp, body),
  };
  let response: Awaited<ReturnType<typeof guardedHop>>;
  try {
    response = await guardedHop(
      { method: 'POST', url: config.url, headers, body },
      {
        policy: { allowHosts: [], privateHosts: [], allowPrivate: config.allow_private, section },
        resolve: options.resolve,
        maxResponseBytes: config.max_response_bytes,
        signal: attemptSignal,
      },
    );
  } catch (error) {
    if (timeout.aborted && !signal.aborted) {
      throw new Error(`no answer within ${config.timeout_ms} ms (${section}.timeout_ms)`);
    }
    throw error;
  }
  const excerpt = response.body.toString('utf8').slice(0, 200);
  if (response.status < 200 || response.status > 299) {
    const redirect = response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : '';
    throw new Error(`the receiver answered ${response.status}${redirect}${excerpt ? `: ${excerpt}` : ''}`);
  }
  return { status: response.status, response: excerpt };
}

/** A clear, final refusal for a private destination without allow_private (the guard checks again). */
async function refusePrivate(
  config: WebhookConfig,
  section: string,
  resolve: Resolver,
  signal: AbortSignal,
): Promise<void> {
  if (config.allow_private) return;
  const url = new URL(config.url);
  const { addresses, hostname } = await checkDestination(
    url,
    { allowHosts: [], privateHosts: [], allowPrivate: true, section },
    resolve,
    signal,
  );
  for (const { address } of addresses) {
    const kind = classifyAddress(address);
    if (kind === 'public') continue;
    throw new UnrecoverableError(
      `${section}.url: "${hostname}" is a ${kind} address (${address}); deliveries to loopback, private, ` +
        `link-local and reserved addresses are refused unless the webhook says allow_private: true`,
    );
  }
}
