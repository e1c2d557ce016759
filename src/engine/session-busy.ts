import { RatchetError } from '../errors/index.js';

/**
 * The error of a run refused because its session is busy: it has an active run (`SESSION_BUSY`, the run in
 * `detail`), or none but messages queued (`QUEUE_WAITING`, their count in `detail`), whose runs start first
 * so that the session's queue stays first come, first served (decision 0040).
 */
export function sessionBusyError(
  sessionId: string,
  code: 'SESSION_BUSY' | 'QUEUE_WAITING',
  detail: string | undefined,
): RatchetError {
  if (code === 'SESSION_BUSY') {
    return new RatchetError('session_busy', `session ${sessionId} already has an active run: ${detail}`, {
      details: { active_run_id: detail },
    });
  }
  return new RatchetError(
    'session_busy',
    `session ${sessionId} has ${detail} queued messages whose runs start first (its last run just ended)`,
    { details: { active_run_id: null, queued_messages: Number(detail) } },
  );
}
