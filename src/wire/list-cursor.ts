/**
 * The opaque cursors of the list endpoints (GET /v1/runs, GET /v1/sessions): a place in the list's order,
 * base64url-encoded with the list it belongs to, so a client keeps it as it is and a cursor of one list is
 * refused by the other. A place is `<ms, 13 digits>:<id>`: creation time and run id for runs, last activity
 * and session id for sessions. Shared with the wire schemas, which browsers load too: web globals only.
 */

export type ListKind = 'runs' | 'sessions' | 'webhook_deliveries';

const placePatterns: Record<ListKind, RegExp> = {
  runs: /^\d{13}:run_[0-9a-z]{16}_[0-9a-z]{10}$/,
  sessions: /^\d{13}:ses_[0-9a-z]{16}$/,
  webhook_deliveries: /^\d{13}:[a-zA-Z][\w-]{0,63}\.ses_[0-9a-z]{16}\.\d{1,20}-\d{1,20}$/,
};

const tags: Record<ListKind, string> = { runs: 'r1', sessions: 's1', webhook_deliveries: 'w1' };

export function encodeCursor(kind: ListKind, place: string): string {
  // Places are ASCII: btoa takes them as they are.
  return btoa(`${tags[kind]}:${place}`).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The place a cursor of that list stands for, or undefined when it is not one. */
export function decodeCursor(kind: ListKind, cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return undefined;
  let text: string;
  try {
    text = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return undefined;
  }
  const prefix = `${tags[kind]}:`;
  if (!text.startsWith(prefix)) return undefined;
  const place = text.slice(prefix.length);
  return placePatterns[kind].test(place) ? place : undefined;
}
