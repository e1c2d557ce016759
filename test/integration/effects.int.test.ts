import { afterEach, describe, expect, it } from 'vitest';
import type { RatchetEvent } from '../../src/events/event.js';
import type { Script } from '../../src/models/index.js';
import { Harness, type HarnessOptions } from '../helpers/harness.js';

// Each effect on a scripted conversation, run by a real worker on real Redis: exactly what the model receives
// (the scripted model's call log records every message it was sent), what the transcript keeps, and the
// events. The context window is the provider entry's `context_window`.
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const big = (label: string, size: number) => ({
  text: `fetching ${label}`,
  tool_calls: [{ name: 'big_result', arguments: { label, size } }],
});
const add = (a: number, b: number) => ({ tool_calls: [{ name: 'add', arguments: { a, b } }] });

async function runWith(
  script: Script,
  effects: unknown[] | undefined,
  extra: Partial<HarnessOptions> & { contextWindow?: number } = {},
) {
  const { contextWindow = 0, ...options } = extra;
  harness = new Harness({
    script,
    maxIterations: 30,
    provider: { context_window: contextWindow },
    agent: effects === undefined ? {} : { effects },
    ...options,
  });
  await harness.startWorker();
  const { runId, sessionId } = await harness.engine.startRun({ input: 'do the task' });
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 30_000 });
  const calls = harness.modelCalls();
  return {
    run,
    sessionId,
    calls,
    agentCalls: calls.filter((call) => call.purpose === undefined),
    summaryCalls: calls.filter((call) => call.purpose === 'summary'),
    transcript: await harness.transcript(sessionId),
    events: await harness.events(sessionId),
  };
}

const ofKind = <Kind extends RatchetEvent['kind']>(events: readonly RatchetEvent[], kind: Kind) =>
  events.filter((event): event is Extract<RatchetEvent, { kind: Kind }> => event.kind === kind);

describe('trim_tool_results', () => {
  it('cuts every tool result but the newest preserve_recent, the same way in every later request', async () => {
    const script = { replies: [big('a', 600), big('b', 600), big('c', 600), { text: 'done' }] };
    const { run, agentCalls, transcript } = await runWith(script, [
      { kind: 'trim_tool_results', params: { max_result_length: 100, preserve_recent: 1 } },
    ]);
    expect(run.status).toBe('completed');
    const results = (call: number) =>
      (agentCalls[call]?.messages ?? []).filter((message) => message.role === 'tool').map((m) => m.text);
    // Request 3 has results a and b: a is cut, b (the newest) is whole.
    expect(results(2)).toHaveLength(2);
    expect(results(2)[0]?.length).toBeLessThan(250);
    expect(results(2)[0]).toMatch(/^result: a:\.+/);
    expect(results(2)[0]).toContain('left out');
    expect(results(2)[1]).toBe(`result: ${'b:'.padEnd(600, '.')}`);
    // Request 4: a and b cut (a exactly as before), c whole.
    expect(results(3)[0]).toBe(results(2)[0]);
    expect(results(3)[1]?.length).toBeLessThan(250);
    expect(results(3)[2]).toBe(`result: ${'c:'.padEnd(600, '.')}`);
    // The transcript keeps every result whole.
    const stored = transcript.filter((message) => message.role === 'tool');
    expect(stored.map((message) => (message.parts[0] as { content: string }).content.length)).toEqual([
      600, 600, 600,
    ]);
  });
});

describe('observation_mask', () => {
  it('at its threshold, replaces all but the newest recent_window results with a note naming the tool', async () => {
    const script = { replies: [big('a', 800), big('b', 800), { text: 'done' }] };
    const { run, agentCalls } = await runWith(
      script,
      [{ kind: 'observation_mask', params: { threshold: 0.1, recent_window: 1 } }],
      { contextWindow: 4000 },
    );
    expect(run.status).toBe('completed');
    // Request 2: about 250 tokens, under 400 (0.1 × 4000): sent as it is.
    const second = agentCalls[1]?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(second.map((message) => message.text.length)).toEqual([`result: a:`.length + 798]);
    // Request 3: over it; a's result is masked, b's kept.
    const third = agentCalls[2]?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(third[0]?.text).toContain('big_result');
    expect(third[0]?.text.length).toBeLessThan(200);
    expect(third[1]?.text).toBe(`result: ${'b:'.padEnd(800, '.')}`);
  });
});

describe('sliding_window', () => {
  it('keeps the task and the recent zones, leaves out the rest with a note, and the script keeps its place', async () => {
    const replies = [...Array.from({ length: 6 }, (_, index) => add(index, 1)), { text: 'all added' }];
    const { run, agentCalls } = await runWith(
      { replies },
      [
        {
          kind: 'sliding_window',
          params: { threshold: 0.01, recent_zone: 2, medium_zone: 2, trim_length: 20 },
        },
      ],
      { contextWindow: 10_000 },
    );
    expect(run.status).toBe('completed');
    // The scripted model answered from its place in the script, though most replies were not sent.
    expect(run.result).toBe('all added');
    expect(agentCalls).toHaveLength(7);
    const last = agentCalls[6]?.messages ?? [];
    expect(last[0]?.role).toBe('system');
    expect(last[1]?.text).toMatch(/^\[\d+ earlier messages are not shown/);
    expect(last[2]).toMatchObject({ role: 'user', text: 'do the task' });
    // recent_zone + medium_zone messages after the task (the zones never split a call from its result).
    expect(last.length).toBeLessThanOrEqual(3 + 4 + 1);
    expect(last.at(-1)?.role).toBe('tool');
  });
});

describe('compact', () => {
  it('summarises the older chat at the threshold; the model gets the summary and the recent entries, the transcript keeps everything', async () => {
    const replies = [
      ...Array.from({ length: 8 }, (_, index) => big(`r${index}`, 1000)),
      { text: 'finished' },
    ];
    const { run, agentCalls, summaryCalls, transcript, events } = await runWith(
      { replies, summary: { text: 'SUMMARY: eight results fetched so far' } },
      [{ kind: 'compact', params: { threshold: 0.5 } }],
      { contextWindow: 4000 },
    );
    expect(run.status).toBe('completed');
    expect(run.result).toBe('finished');
    // Every reply and result is in the transcript; nothing the model was not sent is lost.
    expect(transcript).toHaveLength(1 + 9 + 8);
    const compactions = ofKind(events, 'compaction');
    expect(compactions.length).toBeGreaterThan(0);
    expect(summaryCalls).toHaveLength(compactions.length);
    for (const event of compactions) {
      expect(event.data.reason).toBe('threshold');
      expect(event.data.tokens_after).toBeLessThan(event.data.tokens_before);
    }
    // The request after the first compaction: system prompt, the summary, then the chat from up_to on.
    const first = compactions[0]?.data;
    const after = agentCalls.find((call) => call.iteration === compactions[0]?.data.iteration);
    expect(after?.messages[0]?.role).toBe('system');
    expect(after?.messages[1]?.text).toContain('SUMMARY: eight results fetched so far');
    // The entries kept whole are the chat's newest, from a cut that is not a tool result up to the end.
    const replyIndex = transcript.findIndex((message) => message.id.endsWith(`-i${first?.iteration}-a`));
    const kept = after?.messages.slice(2).map((message) => message.id) ?? [];
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toEqual(transcript.slice(first?.up_to, replyIndex).map((message) => message.id));
    expect(transcript[first?.up_to ?? 0]?.role).not.toBe('tool');
    // The summary request itself offered no tools and carried the summarised entries as text.
    expect(summaryCalls[0]?.tools).toEqual([]);
    expect(summaryCalls[0]?.messages.at(-1)?.text).toContain('[0] user (user): do the task');
    // No request the agent sent went far past the window once compaction had started.
    const tokensOf = (call: (typeof agentCalls)[number]) =>
      Math.ceil(call.messages.reduce((sum, message) => sum + message.text.length, 0) / 4);
    expect(Math.max(...agentCalls.map(tokensOf))).toBeLessThan(4000);
  });

  it('is on by default with a context window, together with trim_tool_results', async () => {
    const replies = [
      ...Array.from({ length: 8 }, (_, index) => big(`r${index}`, 3000)),
      { text: 'finished' },
    ];
    const { run, summaryCalls, agentCalls } = await runWith({ replies }, undefined, { contextWindow: 3000 });
    expect(run.status).toBe('completed');
    expect(summaryCalls.length).toBeGreaterThan(0);
    // trim_tool_results (2000 characters, 4 recent): the oldest result is cut in the last request.
    const tools = agentCalls.at(-1)?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(tools.every((message) => message.text.length < 3100)).toBe(true);
  });

  it('context_window: 0 switches the defaults off: the whole chat is sent', async () => {
    const replies = [
      ...Array.from({ length: 3 }, (_, index) => big(`r${index}`, 3000)),
      { text: 'finished' },
    ];
    const { run, summaryCalls, agentCalls } = await runWith({ replies }, undefined, { contextWindow: 0 });
    expect(run.status).toBe('completed');
    expect(summaryCalls).toHaveLength(0);
    const tools = agentCalls.at(-1)?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(tools.map((message) => message.text.length)).toEqual([3008, 3008, 3008]);
  });
});

describe('loop_detect', () => {
  it('warns the model once when the same call repeats threshold times, with a loop_detected event', async () => {
    const replies = [add(1, 2), add(1, 2), add(1, 2), add(1, 2), { text: 'stopped' }];
    const { run, agentCalls, transcript, events } = await runWith({ replies }, [
      { kind: 'loop_detect', params: { threshold: 3, window_size: 6 } },
    ]);
    expect(run.status).toBe('completed');
    const warnings = transcript.filter((message) => message.metadata.effect === 'loop_detect');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.sender).toBe('ratchet');
    // Added before the fourth request, and sent with it as the last message.
    expect(warnings[0]?.metadata.iteration).toBe(4);
    expect(agentCalls[3]?.messages.at(-1)?.id).toBe(warnings[0]?.id);
    expect(agentCalls[2]?.messages.some((message) => message.id === warnings[0]?.id)).toBe(false);
    const detected = ofKind(events, 'loop_detected');
    expect(detected).toHaveLength(1);
    expect(detected[0]?.data).toMatchObject({ iteration: 4, tool: 'add', count: 3 });
  });
});

describe('reflection', () => {
  it('asks the model to reflect after failure_threshold failed tool calls in a row', async () => {
    const explode = { tool_calls: [{ name: 'explode', arguments: { message: 'boom' } }] };
    const replies = [explode, explode, { text: 'I will change approach' }];
    const { run, agentCalls, transcript, events } = await runWith({ replies }, [
      { kind: 'reflection', params: { failure_threshold: 2 } },
    ]);
    expect(run.status).toBe('completed');
    const prompts = transcript.filter((message) => message.metadata.effect === 'reflection');
    expect(prompts).toHaveLength(1);
    expect(agentCalls[2]?.messages.at(-1)?.id).toBe(prompts[0]?.id);
    expect(ofKind(events, 'reflection').map((event) => event.data)).toEqual([{ iteration: 3, failures: 2 }]);
  });
});

describe('progress', () => {
  it('adds a checkpoint message and a progress event every interval iterations', async () => {
    const replies = [add(1, 1), add(1, 2), add(1, 3), add(1, 4), { text: 'done' }];
    const { run, transcript, events } = await runWith({ replies }, [
      { kind: 'progress', params: { interval: 2 } },
    ]);
    expect(run.status).toBe('completed');
    const checkpoints = transcript.filter((message) => message.metadata.effect === 'progress');
    expect(checkpoints.map((message) => message.metadata.iteration)).toEqual([3, 5]);
    expect(ofKind(events, 'progress')).toHaveLength(2);
  });
});
