/** Display formats shared by the pages. Missing values show as an en dash. */

export const none = '–';

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return none;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  const hours = Math.floor(minutes / 60);
  return `${hours} h ${minutes % 60} min`;
}

export function formatCount(value: number | null | undefined): string {
  if (value === null || value === undefined) return none;
  return value.toLocaleString('en-US');
}

export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return none;
  if (usd === 0) return '$0';
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** A time as the reader's local date and time, to the second. */
export function formatTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return none;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** Milliseconds from one time to another (or to now), or undefined. */
export function elapsedMs(fromIso: string | null | undefined, toIso?: string | null): number | undefined {
  if (fromIso === null || fromIso === undefined) return undefined;
  const from = Date.parse(fromIso);
  const to = toIso === null || toIso === undefined ? Date.now() : Date.parse(toIso);
  return Number.isNaN(from) || Number.isNaN(to) ? undefined : Math.max(0, to - from);
}
