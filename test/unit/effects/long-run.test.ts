import { describe, expect, it } from 'vitest';
import { type ContextView, emptyContextView, type Message } from '../../../src/chat/index.js';
import { estimateMessagesTokens } from '../../../src/models/token-estimate.js';
import {
  applySummary,
  buildSummaryRequest,
  type ModelCallInput,
  type PreviousRequest,
  planModelCall,
  resolveEffects,
} from '../../../src/workflows/core/effects/index.js';
import { conversation, now, runId, systemPrompt } from './conversation.js';

/** What the provider counts beyond our estimate: tool definitions and framing. */
const providerOverhead = 300;
const contextWindow = 8000;

/**
 * The core driven the way the iteration step will drive it, with a provider that counts the estimate plus
 * its overhead and a summariser that answers with a short text: 60 iterations, each with a tool result of
 * 6000 characters (1500 tokens).
 */
function longRun(iterations: number) {
  const effects = resolveEffects({ configured: undefined, contextWindow, contextThreshold: 0.8 });
  let chat: Message[] = conversation('Audit every file.', []);
  let view: ContextView = emptyContextView;
  let previous: PreviousRequest | undefined;
  const sentTokens: number[] = [];
  const summaryRequests: number[] = [];
  for (let iteration = 1; iteration <= iterations; iteration++) {
    const input = (): ModelCallInput => ({
      runId,
      iteration,
      now,
      system: [systemPrompt],
      chat,
      runStart: 0,
      view,
      contextWindow,
      previous,
      effects,
    });
    let plan = planModelCall(input());
    if (plan.kind === 'compact') {
      const request = buildSummaryRequest({ runId, chat, view, upTo: plan.up_to, contextWindow, now });
      summaryRequests.push(estimateMessagesTokens(request.messages) + providerOverhead);
      view = applySummary({
        runId,
        iteration,
        system: [systemPrompt],
        chat,
        view,
        upTo: plan.up_to,
        summaryText: `Audited files 1 to ${iteration - 1}; no findings yet.`,
        tokensBefore: plan.tokens,
        reason: 'threshold',
        previous,
        contextWindow,
        now,
      }).view;
      plan = planModelCall(input());
    }
    if (plan.kind !== 'send') throw new Error(`iteration ${iteration} wants a second compaction`);
    chat = [...chat, ...plan.inject];
    const counted = plan.sent_estimate + providerOverhead;
    sentTokens.push(counted);
    previous = { input_tokens: counted, sent_estimate: plan.sent_estimate };
    const turn = conversation('', [
      {
        tool: 'read_file',
        arguments: `{"path":"f${iteration}.ts"}`,
        result: `${iteration}`.padEnd(6000, '~'),
      },
    ]).slice(1);
    chat = [
      ...chat,
      ...turn.map((message) => ({ ...message, id: message.id.replace('-i1-', `-i${iteration}-`) })),
    ];
  }
  return { chat, sentTokens, summaryRequests };
}

describe('a long run with large tool results', () => {
  const { chat, sentTokens, summaryRequests } = longRun(60);

  it('never sends a request over the context window, and stays under the threshold plus one iteration', () => {
    expect(Math.max(...sentTokens)).toBeLessThanOrEqual(contextWindow);
    expect(Math.max(...sentTokens)).toBeLessThan(0.8 * contextWindow + 1600);
    expect(Math.max(...summaryRequests)).toBeLessThanOrEqual(contextWindow);
  });

  it('stays flat instead of growing with the chat', () => {
    const last20 = sentTokens.slice(-20);
    expect(Math.max(...last20)).toBeLessThan(contextWindow);
    // Without effects the 60th request would be about 60 × 1500 tokens.
    expect(estimateMessagesTokens(chat)).toBeGreaterThan(60 * 1500);
  });

  it('compacts now and then, not every iteration', () => {
    expect(summaryRequests.length).toBeGreaterThan(5);
    expect(summaryRequests.length).toBeLessThan(30);
  });

  it('keeps every message in the chat', () => {
    expect(chat).toHaveLength(1 + 60 * 2);
    expect(new Set(chat.map((message) => message.id)).size).toBe(chat.length);
  });
});
