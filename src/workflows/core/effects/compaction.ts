import type { Message } from '../../../chat/index.js';
import { RatchetError } from '../../../errors/index.js';
import type { EventData } from '../../../events/event.js';
import { estimateMessagesTokens } from '../../../models/token-estimate.js';
import { clipText } from './clip-text.js';
import type { ContextView } from './context-view.js';
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
  const previous = input.view.summary
    ? `The summary of what came before these entries:\n\n${input.view.summary.text}\n\n`
    : '';
  const instructions =
    'You compress the working memory of an agent that is in the middle of a task. Write a summary that ' +
    'lets the agent continue without the original messages: the task and every requirement the user ' +
    'gave, decisions made and why, facts found (names, paths, numbers, identifiers, verbatim where they ' +
    'matter), what was tried and failed, the current state of the work and the next steps. Leave out ' +
    'pleasantries and repetition. Answer with the summary only.';
  const maxTokens = Math.max(
    256,
    Math.min(summaryMaxTokens, Math.floor(input.contextWindow * summaryOutputShare)),
  );
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

/**
 * The view after the model's summary of entries [.., upTo) came back, and the compaction event. An empty
 * summary is a bad reply (retryable), never a view that forgets the conversation.
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
  now: string;
}): { view: ContextView; event: { kind: 'compaction'; data: EventData<'compaction'> } } {
  const text = input.summaryText.trim();
  if (text === '')
    throw new RatchetError('model_bad_response', 'the model answered the summary request with nothing');
  const from = input.view.summary?.up_to ?? 0;
  if (input.upTo <= from || input.upTo > input.chat.length) {
    throw new RatchetError(
      'internal',
      `a summary up to chat entry ${input.upTo} does not follow the current one (up to ${from}, chat of ${input.chat.length})`,
    );
  }
  const view: ContextView = { v: 1, summary: { text, up_to: input.upTo, created_at: input.now } };
  const after = requestTokens(
    viewMessages({ runId: input.runId, system: input.system, chat: input.chat, view }),
    input.previous,
  );
  return {
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
