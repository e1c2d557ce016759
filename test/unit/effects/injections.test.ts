import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/chat/index.js';
import {
  planModelCall,
  type ResolvedEffect,
  resolveEffects,
} from '../../../src/workflows/core/effects/index.js';
import { conversation, now, planInput, runId, shown } from './conversation.js';

const loopDetect: ResolvedEffect = { kind: 'loop_detect', params: { threshold: 3, window_size: 6 } };
const reflection: ResolvedEffect = {
  kind: 'reflection',
  params: { failure_threshold: 2, save_to_memory: false },
};
const progress: ResolvedEffect = { kind: 'progress', params: { interval: 3 } };

function sendPlan(plan: ReturnType<typeof planModelCall>) {
  if (plan.kind !== 'send') throw new Error(`expected a send plan, got ${plan.kind}`);
  return plan;
}

describe('loop_detect', () => {
  const repeated = conversation('Fix it.', [
    { tool: 'read_file', arguments: '{"path":"a.ts"}', result: 'same' },
    { tool: 'list', arguments: '{}', result: 'a.ts' },
    { tool: 'read_file', arguments: '{ "path": "a.ts" }', result: 'same' },
    { tool: 'read_file', arguments: '{"path":"a.ts"}', result: 'same' },
  ]);

  it('warns the model after the same call (key order and spacing aside) threshold times in the window', () => {
    const plan = sendPlan(planModelCall(planInput(repeated, { effects: [loopDetect] })));
    const warning =
      'user: You have called read_file with the same arguments 3 times in your last 4 tool calls, and ' +
      'repeating it will not give a different result. Do not call it again with these arguments: use what ' +
      'you already have, try a different approach, or give your final answer.';
    expect(shown(plan.messages).slice(-2)).toEqual(['tool: ← same', warning]);
    expect(plan.inject).toEqual([
      {
        id: `${runId}-i5-e-loop_detect`,
        sender: 'ratchet',
        role: 'user',
        parts: [{ type: 'text', text: warning.slice('user: '.length) }],
        metadata: { effect: 'loop_detect', iteration: 5 },
        created_at: now,
      },
    ]);
    expect(plan.events).toEqual([
      {
        kind: 'loop_detected',
        data: { iteration: 5, tool: 'read_file', arguments: '{"path":"a.ts"}', count: 3, window_size: 6 },
      },
    ]);
  });

  it('stays quiet below the threshold, outside the window, and after its warning until calls repeat again', () => {
    const twice = repeated.slice(0, 7);
    expect(sendPlan(planModelCall(planInput(twice, { effects: [loopDetect] }))).inject).toEqual([]);
    const narrow: ResolvedEffect = { kind: 'loop_detect', params: { threshold: 3, window_size: 2 } };
    expect(sendPlan(planModelCall(planInput(repeated, { effects: [narrow] }))).inject).toEqual([]);

    const warned = sendPlan(planModelCall(planInput(repeated, { effects: [loopDetect] })));
    const afterWarning = [...repeated, ...warned.inject];
    expect(
      sendPlan(planModelCall(planInput(afterWarning, { iteration: 6, effects: [loopDetect] }))).inject,
    ).toEqual([]);
  });
});

describe('reflection', () => {
  const failing = conversation('Deploy.', [
    { tool: 'deploy', result: 'ok' },
    { tool: 'deploy', result: 'permission denied', isError: true },
    { tool: 'deploy', arguments: '{"force":true}', result: 'permission denied', isError: true },
  ]);

  it('prompts a reflection after failure_threshold tool failures in a row', () => {
    const plan = sendPlan(planModelCall(planInput(failing, { effects: [reflection] })));
    expect(shown(plan.inject)).toEqual([
      'user: Your last 2 tool calls failed. Before the next call, stop and reflect: what do the errors say, ' +
        'which assumption was wrong, and what will you do differently? Then continue with a changed approach.',
    ]);
    expect(plan.events).toEqual([{ kind: 'reflection', data: { iteration: 4, failures: 2 } }]);
  });

  it('does not count failures before a success, or before its own latest prompt', () => {
    const once = failing.slice(0, 5);
    expect(sendPlan(planModelCall(planInput(once, { effects: [reflection] }))).inject).toEqual([]);
    const recovered = conversation('Deploy.', [
      { tool: 'deploy', result: 'no', isError: true },
      { tool: 'deploy', result: 'no', isError: true },
      { tool: 'deploy', result: 'ok' },
    ]);
    expect(sendPlan(planModelCall(planInput(recovered, { effects: [reflection] }))).inject).toEqual([]);
    const prompted = sendPlan(planModelCall(planInput(failing, { effects: [reflection] })));
    expect(
      sendPlan(
        planModelCall(planInput([...failing, ...prompted.inject], { iteration: 5, effects: [reflection] })),
      ).inject,
    ).toEqual([]);
  });
});

describe('progress', () => {
  const chat = conversation('Long job.', []);

  it('adds a checkpoint after every interval iterations, and a progress event', () => {
    const checkpoints = [1, 2, 3, 4, 5, 6, 7, 8].map(
      (iteration) => sendPlan(planModelCall(planInput(chat, { iteration, effects: [progress] }))).inject,
    );
    expect(checkpoints.map((inject) => inject.length)).toEqual([0, 0, 0, 1, 0, 0, 1, 0]);
    const plan = sendPlan(planModelCall(planInput(chat, { iteration: 4, effects: [progress] })));
    expect(shown(plan.messages)).toEqual([
      'system: You are careful.',
      'user: Long job.',
      'user: Progress checkpoint: 3 iterations done. Take stock briefly: what is done, what remains, and is ' +
        'the current approach working? Then continue.',
    ]);
    expect(plan.events).toEqual([
      { kind: 'progress', data: { fraction: null, message: 'checkpoint after 3 iterations' } },
    ]);
  });

  it('is not added twice when the plan is made again after its message was added to the chat', () => {
    const first = sendPlan(planModelCall(planInput(chat, { iteration: 4, effects: [progress] })));
    const again = sendPlan(
      planModelCall(planInput([...chat, ...first.inject], { iteration: 4, effects: [progress] })),
    );
    expect(again.inject).toEqual([]);
    expect(shown(again.messages)).toEqual(shown(first.messages));
  });
});

describe('the order of effects', () => {
  it('adds messages after compaction-class effects ran, so nothing added is trimmed or summarised at once', () => {
    const failures = Array.from({ length: 3 }, () => ({
      tool: 'fetch',
      result: 'x'.repeat(400),
      isError: true,
    }));
    const chat = conversation('Get it.', failures);
    const effects = resolveEffects({
      configured: [
        { kind: 'reflection', params: { failure_threshold: 3 } },
        { kind: 'trim_tool_results', params: { max_result_length: 20, preserve_recent: 0 } },
        { kind: 'compact', params: {} },
      ],
      contextWindow: 10_000,
      contextThreshold: 0.8,
    });
    const plan = sendPlan(planModelCall(planInput(chat, { contextWindow: 10_000, effects })));
    expect(plan.applied).toEqual(['trim_tool_results', 'reflection']);
    const last = plan.messages.at(-1) as Message;
    expect(last.metadata).toEqual({ effect: 'reflection', iteration: 4 });
    expect(shown([last])[0]).toContain('Your last 3 tool calls failed.');
  });

  it('reads tool calls only from the run start on', () => {
    const earlierRun = conversation('Old.', [
      { tool: 'read_file', result: 'r' },
      { tool: 'read_file', result: 'r' },
      { tool: 'read_file', result: 'r' },
    ]);
    const plan = sendPlan(
      planModelCall(planInput(earlierRun, { runStart: earlierRun.length - 2, effects: [loopDetect] })),
    );
    expect(plan.inject).toEqual([]);
  });
});
