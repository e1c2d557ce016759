import type { ContextView, Message } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import type { EventData } from '../../../events/event.js';
import { estimateMessagesTokens } from '../../../models/token-estimate.js';

import { clipText } from './clip-text.js';
import { viewMessages } from './context-view.js';
import { type PreviousRequest, requestTokens } from './request-tokens.js';

/** After a compaction, the chat entries still sent whole take at most this share of the threshold. */
export const recentShareOfThreshold = 0.25;
/** A compaction is worth its model call only when it summarises at least this share of the threshold. */
export const minimumSummarisedShare = 0.1;
/** The summary request's transcript takes at most this share of the context window. */
export const summaryInputShare = 0.5;
/** The summary's length limit: this share of the context window, at most summaryMaxTokens. */
export const summaryOutputShare = 0.1;
export const summaryMaxTokens = 4096;
/**
 * What a stored summary may hold: this share of the context window (about four characters a token), however
 * long the model's answer was. Over it, the summary is cut with a note (summaryBound).
 */
export const summaryMaxShare = 0.25;
/** The bound when the window is unknown (0): four times the longest summary ever asked for. */
export const unknownWindowSummaryChars = 4 * summaryMaxTokens * 4;

/**
 * The most characters a summary may hold in the view: summaryMaxShare of the window, never less than what
 * the summary request asked for (its maxTokens), unknownWindowSummaryChars when the window is unknown. A
 * summary and a previous one re-sent in a summary request both stay within it, so one oversized answer can
 * never make every later request of the session too long.
 */
export function summaryBound(contextWindow: number): number {
  if (contextWindow <= 0) return unknownWindowSummaryChars;
  return Math.max(summaryMaxTokensFor(contextWindow) * 4, Math.floor(contextWindow * summaryMaxShare * 4));
}

/** The summary's length limit asked of the provider. */
function summaryMaxTokensFor(contextWindow: number): number {
  return Math.max(256, Math.min(summaryMaxTokens, Math.floor(contextWindow * summaryOutputShare)));
}

/** The text within summaryBound: its start and a note of how much was cut (the note counts in the bound). */
export function boundSummary(text: string, contextWindow: number): string {
  const bound = summaryBound(contextWindow);
  if (text.length <= bound) return text;
  // The note is at most 64 characters (a 20-digit count): what is kept and the note stay within the bound.
  return clipText(text, bound - 64, 'summary');
}

/**
 * Where a threshold compaction cuts the chat: the summary covers entries [from, cut), where `from` is what
 * the current summary covers. The cut is the earliest one whose remaining entries fit the recent budget
 * (recentShareOfThreshold of the threshold), and it never falls on a tool result, so the results stay
 * with the call that asked for them. Undefined when there is nothing worth summarising.
 */
export function compactionCut(input: {
  chat: readonly Message[];
  view: ContextView;
  contextWindow: number;
  threshold: number;
}): number | undefined {
  const { chat } = input;
  const from = input.view.summary?.up_to ?? 0;
  const budget = input.contextWindow * input.threshold;
  const recentBudget = Math.floor(budget * recentShareOfThreshold);
  let cut = chat.length;
  let tail = 0;
  // Walk back from the end while the entries after the cut still fit.
  for (let index = chat.length - 1; index >= from; index--) {
    tail += estimateMessagesTokens([chat[index] as Message]);
    if (tail > recentBudget) break;
    if (chat[index]?.role !== 'tool') cut = index;
  }
  if (cut <= from) return undefined;
  const summarised = estimateMessagesTokens(chat.slice(from, cut));
  return summarised >= budget * minimumSummarisedShare ? cut : undefined;
}

/**
 * Where a compaction after a provider's context-length error cuts: everything not yet summarised except the
 * messages effects added for this very iteration. Undefined when that leaves nothing to summarise (the
 * request is too long even so: the run fails with context_exceeded).
 */
export function reactiveCompactionCut(input: {
  chat: readonly Message[];
  view: ContextView;
  iteration: number;
}): number | undefined {
  const from = input.view.summary?.up_to ?? 0;
  let cut = input.chat.length;
  while (cut > from) {
    const last = input.chat[cut - 1] as Message;
    if (last.metadata.effect === undefined || last.metadata.iteration !== input.iteration) break;
    cut -= 1;
  }
  return cut > from ? cut : undefined;
}

export interface SummaryRequest {
  messages: Message[];
  /** The limit to ask the provider for. */
  maxTokens: number;
}

/**
 * The request that asks the model for a summary of chat entries [from, upTo), building on the current
 * summary. The entries are rendered as a plain-text transcript (so no tool call needs its result beside
 * it) bounded by summaryInputShare of the window: parts are cut evenly when the whole does not fit, and
 * the oldest entries are left out, with a note, when even that is not enough.
 */
export function buildSummaryRequest(input: {
  runId: string;
  chat: readonly Message[];
  view: ContextView;
  upTo: number;
  contextWindow: number;
  now: string;
  /**
   * The share of the window the transcript may take (default summaryInputShare); smaller when the provider
   * refused a summary request as too long (its tokenizer counts more than the estimate).
   */
  inputShare?: number;
}): SummaryRequest {
  const from = input.view.summary?.up_to ?? 0;
  const entries = input.chat.slice(from, input.upTo);
  const share = input.inputShare ?? summaryInputShare;
  const budgetCharacters = Math.max(4000, Math.floor(input.contextWindow * share * 4));
  const transcript = renderTranscript(entries, from, budgetCharacters);
  // Bounded again here: a view stored before summaries were bounded may hold any length.
  const previous = input.view.summary
    ? `The summary of what came before these entries:\n\n${boundSummary(input.view.summary.text, input.contextWindow)}\n\n`
    : '';
  const instructions =
    'You compress the working memory of an agent that is in the middle of a task. Write a summary that ' +
    'lets the agent continue without the original messages: the task and every requirement the user ' +
    'gave, decisions made and why, facts found (names, paths, numbers, identifiers, verbatim where they ' +
    'matter), what was tried and failed, the current state of the work and the next steps. Leave out ' +
    'pleasantries and repetition. Answer with the summary only.';
  const maxTokens = summaryMaxTokensFor(input.contextWindow);
  return {
    maxTokens,
    messages: [
      message(`${input.runId}-compact-${input.upTo}-system`, 'system', instructions, input.now),
      message(
        `${input.runId}-compact-${input.upTo}-input`,
        'user',
        `${previous}The conversation entries to summarise:\n\n${transcript}`,
        input.now,
      ),
    ],
  };
}

function message(id: string, role: 'system' | 'user', text: string, now: string): Message {
  return { id, sender: 'ratchet', role, parts: [{ type: 'text', text }], metadata: {}, created_at: now };
}

/** The entries as text, `[index] role (sender): ...`, within `budget` characters. */
export function renderTranscript(entries: readonly Message[], firstIndex: number, budget: number): string {
  const texts = entries.map((entry) => entry.parts.map(partText));
  const partCount = texts.reduce((sum, parts) => sum + parts.length, 0);
  const total = texts.reduce((sum, parts) => sum + parts.reduce((inner, text) => inner + text.length, 0), 0);
  const partLimit =
    total <= budget ? Number.POSITIVE_INFINITY : Math.max(200, Math.floor(budget / Math.max(1, partCount)));
  const lines = entries.map((entry, index) => {
    const body = (texts[index] ?? [])
      .map((text) => (text.length > partLimit ? clipText(text, partLimit, 'part') : text))
      .join('\n');
    return `[${firstIndex + index}] ${entry.role} (${entry.sender}): ${body}`;
  });
  // Still too long: leave out the oldest lines.
  let length = lines.reduce((sum, line) => sum + line.length + 2, 0);
  let skipped = 0;
  while (length > budget && skipped < lines.length - 1) {
    length -= (lines[skipped] as string).length + 2;
    skipped += 1;
  }
  const kept = lines.slice(skipped).join('\n\n');
  return skipped === 0
    ? kept
    : `[${skipped} older entries left out: too long to summarise at once]\n\n${kept}`;
}

function partText(part: Message['parts'][number]): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'tool_call':
      return `calls ${part.name}(${part.arguments}) [${part.id}]`;
    case 'tool_result':
      return `${part.is_error ? 'error' : 'result'} for [${part.tool_call_id}]: ${part.content}`;
    case 'image':
      return '[image]';
  }
}

/** What came of a summary request: a new view and its event, or a compaction given up (the view says so). */
export type SummaryOutcome =
  | { kind: 'summary'; view: ContextView; event: { kind: 'compaction'; data: EventData<'compaction'> } }
  | { kind: 'declined'; view: ContextView };

/**
 * The view after the model's summary of entries [.., upTo) came back, and the compaction event. The summary
 * is kept within summaryBound (cut with a note when longer). An empty summary never becomes a view that
 * forgets the conversation: when the request the compaction was for still fits the window (a threshold
 * compaction below the window), the compaction is declined — the view keeps its summary and records that
 * this run's iteration goes on without one, so a repeated step sends the same request instead of asking
 * again; otherwise it is a bad reply (retried).
 */
export function applySummary(input: {
  runId: string;
  iteration: number;
  system: readonly Message[];
  chat: readonly Message[];
  view: ContextView;
  upTo: number;
  summaryText: string;
  tokensBefore: number;
  reason: EventData<'compaction'>['reason'];
  previous: PreviousRequest | undefined;
  contextWindow: number;
  now: string;
}): SummaryOutcome {
  const from = input.view.summary?.up_to ?? 0;
  if (input.upTo <= from || input.upTo > input.chat.length) {
    throw new RatchetError(
      'internal',
      `a summary up to chat entry ${input.upTo} does not follow the current one (up to ${from}, chat of ${input.chat.length})`,
    );
  }
  const text = boundSummary(input.summaryText.trim(), input.contextWindow);
  if (text === '') {
    const fits =
      input.reason === 'threshold' && input.contextWindow > 0 && input.tokensBefore < input.contextWindow;
    if (!fits)
      throw new RatchetError('model_bad_response', 'the model answered the summary request with nothing');
    return {
      kind: 'declined',
      view: {
        v: 1,
        summary: input.view.summary,
        declined: { run_id: input.runId, iteration: input.iteration, up_to: input.upTo },
      },
    };
  }
  const view: ContextView = { v: 1, summary: { text, up_to: input.upTo, created_at: input.now } };
  const after = requestTokens(
    viewMessages({ runId: input.runId, system: input.system, chat: input.chat, view }),
    input.previous,
  );
  return {
    kind: 'summary',
    view,
    event: {
      kind: 'compaction',
      data: {
        iteration: input.iteration,
        up_to: input.upTo,
        tokens_before: input.tokensBefore,
        tokens_after: after,
        reason: input.reason,
      },
    },
  };
}

/** Whether the view says this run's iteration gave its compaction up (an empty summary; see applySummary). */
export function compactionDeclined(view: ContextView, runId: string, iteration: number): boolean {
  return view.declined?.run_id === runId && view.declined.iteration === iteration;
}
