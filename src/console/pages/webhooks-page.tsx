// Test ids: webhook-deliveries, webhook-delivery (data-delivery-id, data-status), webhook-status,
// webhook-attempts, webhook-error, webhook-next, webhook-redeliver, webhooks-empty, webhooks-older,
// webhook-redelivered.
import { useState } from 'preact/hooks';
import type { WebhookDelivery, WebhookDeliveryList } from '../../client/index.js';
import { ErrorNote } from '../components/error-note.js';
import { TableHead } from '../components/table-head.js';
import { Text } from '../components/text.js';
import { usePoll } from '../components/use-poll.js';
import { formatTime, none } from '../format.js';
import type { PageProps } from '../page-props.js';
import { runHref } from '../router.js';

/** Deliveries a page of the list holds. */
const pageSize = 50;

const statusLabels: Record<WebhookDelivery['status'], string> = {
  pending: 'pending',
  retrying: 'retrying',
  delivering: 'delivering',
  delivered: 'delivered',
  failed: 'failed',
};

/** The status colours of the runs' badges that mean the same. */
const statusClasses: Record<WebhookDelivery['status'], string> = {
  pending: 'status-queued',
  retrying: 'status-waiting',
  delivering: 'status-running',
  delivered: 'status-completed',
  failed: 'status-failed',
};

const columns = [
  { label: 'Event' },
  { label: 'Webhook' },
  { label: 'Run' },
  { label: 'Status' },
  { label: 'Attempts', numeric: true },
  { label: 'Last error' },
  { label: 'Next attempt' },
  { label: 'Created' },
  { label: 'Action' },
] as const;

/**
 * The webhook deliveries (GET /v1/webhooks/deliveries), newest first and refreshed while shown: each one's
 * status, attempts, last error and next attempt, and a button that sends it again now with its webhook-id.
 * Older pages are added below on request.
 */
export function WebhooksPage({ client }: PageProps) {
  const poll = usePoll((signal) => client.webhookDeliveries({ limit: pageSize }, { signal }), [client]);
  const [older, setOlder] = useState<WebhookDeliveryList[]>([]);
  const [olderError, setOlderError] = useState<unknown>(undefined);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [redelivered, setRedelivered] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState<string | undefined>(undefined);
  const first = poll.data;
  const pages = first === undefined ? [] : [first, ...older];
  const seen = new Set<string>();
  const deliveries = pages
    .flatMap((page) => page.deliveries)
    .filter((delivery) => !seen.has(delivery.id) && seen.add(delivery.id));
  const nextCursor = pages.at(-1)?.next_cursor ?? null;

  const showOlder = async () => {
    if (nextCursor === null) return;
    try {
      const page = await client.webhookDeliveries({ limit: pageSize, cursor: nextCursor });
      setOlder((pages) => [...pages, page]);
      setOlderError(undefined);
    } catch (error) {
      setOlderError(error);
    }
  };
  const redeliver = async (delivery: WebhookDelivery) => {
    setBusy(delivery.id);
    try {
      await client.redeliverWebhook(delivery.id);
      setRedelivered(delivery.id);
      setActionError(undefined);
      // Older pages were read before: read them again from the top.
      setOlder([]);
      poll.refresh();
    } catch (error) {
      setActionError(error);
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <section aria-labelledby="webhooks-heading">
      <h1 id="webhooks-heading">Webhooks</h1>
      <p class="page-intro">
        Events sent to the config's webhooks, newest first: a failed attempt is retried with a doubling delay
        for at least 24 hours, always with the same webhook-id.
      </p>
      <ErrorNote error={poll.error ?? actionError ?? olderError} />
      {redelivered !== undefined && (
        <p role="status" data-testid="webhook-redelivered">
          Delivery <Text value={redelivered} /> is sent again.
        </p>
      )}
      {first === undefined ? (
        poll.error === undefined && <p role="status">Loading…</p>
      ) : deliveries.length === 0 ? (
        <p data-testid="webhooks-empty">
          No deliveries yet. Webhooks are set in the config's <code>webhooks</code> section.
        </p>
      ) : (
        <>
          <div class="table-scroll">
            <table data-testid="webhook-deliveries">
              <caption class="visually-hidden">Webhook deliveries</caption>
              <TableHead columns={columns} />
              <tbody>
                {deliveries.map((delivery) => (
                  <DeliveryRow
                    key={delivery.id}
                    delivery={delivery}
                    busy={busy === delivery.id}
                    onRedeliver={() => void redeliver(delivery)}
                  />
                ))}
              </tbody>
            </table>
          </div>
          {nextCursor !== null && (
            <button
              type="button"
              class="secondary"
              onClick={() => void showOlder()}
              data-testid="webhooks-older"
            >
              Show older deliveries
            </button>
          )}
        </>
      )}
    </section>
  );
}

function DeliveryRow(props: { delivery: WebhookDelivery; busy: boolean; onRedeliver: () => void }) {
  const { delivery } = props;
  return (
    <tr data-testid="webhook-delivery" data-delivery-id={delivery.id} data-status={delivery.status}>
      <td>
        <Text value={delivery.type} />
      </td>
      <td>
        <Text value={delivery.webhook} />
      </td>
      <td>
        <a href={runHref(delivery.run_id)}>
          <Text value={delivery.run_id} />
        </a>
      </td>
      <td>
        <span class={`status ${statusClasses[delivery.status]}`} data-testid="webhook-status">
          {statusLabels[delivery.status]}
        </span>
      </td>
      <td class="number" data-testid="webhook-attempts">
        {delivery.attempts} of {delivery.max_attempts}
      </td>
      <td data-testid="webhook-error">
        {delivery.last_error === null ? none : <Text value={delivery.last_error} />}
      </td>
      <td data-testid="webhook-next">
        {delivery.next_attempt_at === null ? (
          none
        ) : (
          <time dateTime={delivery.next_attempt_at}>{formatTime(delivery.next_attempt_at)}</time>
        )}
      </td>
      <td>
        <time dateTime={delivery.created_at}>{formatTime(delivery.created_at)}</time>
      </td>
      <td>
        <button
          type="button"
          class="secondary"
          disabled={props.busy || delivery.status === 'delivering'}
          onClick={props.onRedeliver}
          data-testid="webhook-redeliver"
          aria-label={`Redeliver ${delivery.type} of run ${delivery.run_id} to ${delivery.webhook}`}
        >
          Redeliver
        </button>
      </td>
    </tr>
  );
}
