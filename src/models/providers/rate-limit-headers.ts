import type { RateLimitStatus } from '../completer.js';

type Headers = Readonly<Record<string, string | undefined>>;

/** One budget a provider reports: what is left of it and when it is whole again. */
interface Budget {
  kind: 'requests' | 'tokens';
  remaining: string;
  reset: string;
}

const budgets: readonly Budget[] = [
  { kind: 'requests', remaining: 'x-ratelimit-remaining-requests', reset: 'x-ratelimit-reset-requests' },
  { kind: 'tokens', remaining: 'x-ratelimit-remaining-tokens', reset: 'x-ratelimit-reset-tokens' },
  {
    kind: 'requests',
    remaining: 'anthropic-ratelimit-requests-remaining',
    reset: 'anthropic-ratelimit-requests-reset',
  },
  {
    kind: 'tokens',
    remaining: 'anthropic-ratelimit-tokens-remaining',
    reset: 'anthropic-ratelimit-tokens-reset',
  },
  {
    kind: 'tokens',
    remaining: 'anthropic-ratelimit-input-tokens-remaining',
    reset: 'anthropic-ratelimit-input-tokens-reset',
  },
  {
    kind: 'tokens',
    remaining: 'anthropic-ratelimit-output-tokens-remaining',
    reset: 'anthropic-ratelimit-output-tokens-reset',
  },
];

/**
 * Reads the budgets a provider reports in its response headers:
 * - OpenAI and xAI: `x-ratelimit-remaining-{requests,tokens}`, `x-ratelimit-reset-{requests,tokens}`
 *   (durations such as "1s", "6m0s", "20ms");
 * - Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{remaining,reset}` (resets
 *   are RFC 3339 times).
 * The tokens remaining are the lowest any token budget reports (Anthropic's `tokens-remaining` is already
 * the most restrictive one). `resetMs` is when a spent budget (0 remaining) is whole again, the latest of
 * them if several are spent; with none spent, the latest reset reported. Undefined when the headers say
 * nothing. `now` (epoch ms) turns reset times into durations.
 */
export function rateLimitStatusOf(headers: Headers | undefined, now: number): RateLimitStatus | undefined {
  if (headers === undefined) return undefined;
  const header = lowerCased(headers);
  const status: RateLimitStatus = {};
  const resets: number[] = [];
  const spentResets: number[] = [];
  for (const budget of budgets) {
    const remaining = count(header[budget.remaining]);
    const reset = resetMsOf(header[budget.reset], now);
    if (remaining !== undefined) {
      const field = budget.kind === 'requests' ? 'remainingRequests' : 'remainingTokens';
      status[field] = lowest(status[field], remaining);
    }
    if (reset !== undefined) {
      resets.push(reset);
      if (remaining === 0) spentResets.push(reset);
    }
  }
  const relevant = spentResets.length > 0 ? spentResets : resets;
  if (relevant.length > 0) status.resetMs = Math.max(...relevant);
  return Object.keys(status).length > 0 ? status : undefined;
}

/**
 * How long the provider asks us to wait: `retry-after-ms` (OpenAI, milliseconds), else `retry-after`
 * (seconds, or an HTTP date).
 */
export function retryAfterMsOf(headers: Headers | undefined, now: number): number | undefined {
  if (headers === undefined) return undefined;
  const header = lowerCased(headers);
  const milliseconds = nonNegative(header['retry-after-ms']);
  if (milliseconds !== undefined) return Math.ceil(milliseconds);
  const value = header['retry-after']?.trim();
  if (value === undefined || value === '') return undefined;
  const seconds = nonNegative(value);
  if (seconds !== undefined) return Math.ceil(seconds * 1000);
  return untilDate(value, now);
}

const durationPattern = /^(?:\d+(?:\.\d+)?(?:ms|us|µs|ns|h|m|s))+$/;
const durationUnitPattern = /(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/g;
const unitMs: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 0.000_001,
};

/** A reset given as a duration ("1m30s"), a number of seconds, or a point in time. */
function resetMsOf(value: string | undefined, now: number): number | undefined {
  const text = value?.trim();
  if (text === undefined || text === '') return undefined;
  if (durationPattern.test(text)) {
    let ms = 0;
    for (const [, amount, unit] of text.matchAll(durationUnitPattern)) {
      ms += Number(amount) * (unitMs[unit ?? ''] ?? 0);
    }
    return Math.ceil(ms);
  }
  const seconds = nonNegative(text);
  if (seconds !== undefined) {
    // A large number is a Unix time in seconds, a small one a wait.
    return Math.max(0, Math.ceil(seconds > 1e9 ? seconds * 1000 - now : seconds * 1000));
  }
  return untilDate(text, now);
}

/** Milliseconds until an HTTP date or RFC 3339 time (0 when past); only text that looks like a date counts. */
function untilDate(text: string, now: number): number | undefined {
  if (!/[a-z]/i.test(text) && !text.includes(':')) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function count(value: string | undefined): number | undefined {
  const number = nonNegative(value);
  return number === undefined ? undefined : Math.floor(number);
}

function nonNegative(value: string | undefined): number | undefined {
  const text = value?.trim();
  if (text === undefined || !/^\d+(?:\.\d+)?$/.test(text)) return undefined;
  return Number(text);
}

function lowest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

function lowerCased(headers: Headers): Record<string, string | undefined> {
  const result: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) result[name.toLowerCase()] = value;
  return result;
}
