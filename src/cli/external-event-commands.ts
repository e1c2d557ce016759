import type { ApiTarget } from './command-line.js';
import type { ProcessIo } from './process-io.js';
import { remoteApi } from './remote-api.js';
import { printable } from './terminal.js';

/** What `ratchet events send` and `ratchet signal` send: the event's name, payload and id (decision 0033). */
export interface ExternalEventOptions extends ApiTarget {
  event: string;
  /** The payload, parsed from --payload (absent: none). */
  payload: unknown;
  id: string | undefined;
}

/**
 * `ratchet events send NAME [--payload JSON] [--id ID]`: POST /v1/events. Every run waiting for NAME whose
 * match the payload contains receives it, and each trigger of NAME starts its run; the same id twice delivers
 * once (an operator's token: events reach every tenant).
 */
export async function eventsSendCommand(options: ExternalEventOptions, io: ProcessIo): Promise<number> {
  const { client } = remoteApi(options, io);
  const sent = await client.sendEvent(body(options));
  const runs = sent.runs.map(
    (run) =>
      `\n  trigger ${run.trigger} (${printable(run.agent)}): run ${run.run_id}${run.started ? '' : ' (started before)'}`,
  );
  io.stdout.write(
    `${sent.duplicate ? 'already sent' : 'sent'} event ${printable(options.event)} (id ${printable(sent.id)}): ` +
      `${sent.woken} waiting step${sent.woken === 1 ? '' : 's'} woken${runs.join('')}\n`,
  );
  return 0;
}

/**
 * `ratchet signal RUN_ID NAME [--payload JSON] [--id ID]`: POST /v1/runs/:id/signal. The run's wait_for_event
 * for NAME receives it, now or when it waits later; the same id twice delivers once.
 */
export async function signalCommand(
  options: ExternalEventOptions & { runId: string },
  io: ProcessIo,
): Promise<number> {
  const { client } = remoteApi(options, io, { runId: options.runId });
  const sent = await client.signal(options.runId, body(options));
  io.stdout.write(
    `${sent.duplicate ? 'already signalled' : 'signalled'} run ${options.runId} with ${printable(options.event)} ` +
      `(id ${printable(sent.id)}): ${sent.woken} waiting step${sent.woken === 1 ? '' : 's'} woken\n`,
  );
  return 0;
}

function body(options: ExternalEventOptions) {
  return {
    event: options.event,
    ...(options.payload === undefined ? {} : { payload: options.payload }),
    ...(options.id === undefined ? {} : { id: options.id }),
  };
}
