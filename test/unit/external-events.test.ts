import { describe, expect, it } from 'vitest';
import '../../src/models/index.js';
import { renderTriggerInput } from '../../src/engine/triggered-runs.js';
import { payloadMatches } from '../../src/tools/builtin/waits/event-match.js';
import { waitsToolbox } from '../../src/tools/builtin/waits/waits-toolbox.js';
import { triggeredRunIds } from '../../src/workflows/ids.js';
import { configParser } from '../config/config-parser.js';

// The pure parts of decision 0033: what a wait's match takes, what a trigger's template makes, the bounds of
// the tools' inputs and of the config's events and triggers.

describe('payloadMatches', () => {
  const payload = { order: { id: 42, lines: [1, 2] }, status: 'paid', amount: 7 };
  it('takes a payload that contains the match, nested objects key by key', () => {
    expect(payloadMatches(payload, undefined)).toBe(true);
    expect(payloadMatches(payload, {})).toBe(true);
    expect(payloadMatches(payload, { status: 'paid' })).toBe(true);
    expect(payloadMatches(payload, { order: { id: 42 } })).toBe(true);
    expect(payloadMatches(payload, { order: { lines: [1, 2] }, amount: 7 })).toBe(true);
  });
  it('refuses a different value, a missing key, a partial array or another type', () => {
    expect(payloadMatches(payload, { status: 'refunded' })).toBe(false);
    expect(payloadMatches(payload, { currency: 'EUR' })).toBe(false);
    expect(payloadMatches(payload, { order: { lines: [1] } })).toBe(false);
    expect(payloadMatches(payload, { amount: '7' })).toBe(false);
    expect(payloadMatches('text', { a: 1 })).toBe(false);
    expect(payloadMatches(null, { a: null })).toBe(false);
    expect(payloadMatches({ a: null }, { a: null })).toBe(true);
  });
});

describe('renderTriggerInput', () => {
  const event = {
    id: 'evt-1',
    event: 'ticket.opened',
    payload: { ticket: { id: 9, tags: ['a'] }, title: 'fire' },
  };
  it('fills in paths of the payload, the name and the id; an absent path is nothing', () => {
    expect(
      renderTriggerInput(
        '{{event}} {{id}}: {{ payload.title }} #{{payload.ticket.id}} {{payload.ticket.tags}} [{{payload.nope.x}}]',
        event,
      ),
    ).toBe('ticket.opened evt-1: fire #9 ["a"] []');
  });
  it('refuses an input longer than the bound, naming it', () => {
    expect(() =>
      renderTriggerInput('{{payload.title}}', { ...event, payload: { title: 'x'.repeat(100_001) } }),
    ).toThrow(/at most 100000 fit/);
  });
});

it('a trigger and an event id name one session and run, the same every time', () => {
  const ids = triggeredRunIds('0/agent/evt-1');
  expect(ids).toEqual(triggeredRunIds('0/agent/evt-1'));
  expect(ids.runId.startsWith(`run_${ids.sessionId.slice(4)}_`)).toBe(true);
  expect(triggeredRunIds('1/agent/evt-1').sessionId).not.toBe(ids.sessionId);
});

describe("the waits toolbox's inputs", () => {
  const tools = new Map(waitsToolbox().tools.map((tool) => [tool.name, tool]));
  const wait = tools.get('wait_for_event');
  const sleep = tools.get('sleep');
  it('bound the event name, the match and the timeout', () => {
    expect(wait?.inputSchema.safeParse({ event: 'a.b', timeout_s: 10 }).success).toBe(true);
    expect(wait?.inputSchema.safeParse({ event: 'a b', timeout_s: 10 }).success).toBe(false);
    expect(wait?.inputSchema.safeParse({ event: 'x'.repeat(129), timeout_s: 10 }).success).toBe(false);
    expect(wait?.inputSchema.safeParse({ event: 'a', timeout_s: 30 * 86_400 + 1 }).success).toBe(false);
    expect(wait?.inputSchema.safeParse({ event: 'a' }).success).toBe(false);
    const match = { blob: 'x'.repeat(5000) };
    const refused = wait?.inputSchema.safeParse({ event: 'a', match, timeout_s: 10 });
    expect(refused?.error?.issues[0]?.message).toMatch(/match is at most 4096 bytes as JSON/);
  });
  it('sleep takes seconds or until, one of them, bounded', () => {
    expect(sleep?.inputSchema.safeParse({ seconds: 5 }).success).toBe(true);
    expect(sleep?.inputSchema.safeParse({ until: '2030-01-01T09:00:00Z' }).success).toBe(true);
    expect(sleep?.inputSchema.safeParse({ seconds: 5, until: '2030-01-01T09:00:00Z' }).success).toBe(false);
    expect(sleep?.inputSchema.safeParse({}).success).toBe(false);
    expect(sleep?.inputSchema.safeParse({ seconds: 30 * 86_400 + 1 }).success).toBe(false);
    expect(sleep?.inputSchema.safeParse({ until: 'tomorrow' }).success).toBe(false);
  });
});

describe('the config of events and triggers', () => {
  const { parse, problemsOf } = configParser();
  const base = (extra: string) => `
providers: [{ name: m, kind: scripted, model: test, default: { text: ok } }]
agents: [{ name: helper, provider: m }]
${extra}`;
  it('defaults to an hour of retention and no triggers', () => {
    const config = parse(base(''));
    expect(config.events.retention_s).toBe(3600);
    expect(config.events.max_kept_per_event).toBe(1000);
    expect(config.triggers).toEqual([]);
  });
  it('refuses a trigger of an unknown agent, a bad event name and retention past its bound', () => {
    const problems = problemsOf(
      base(`
triggers: [{ event: 'bad name', agent: nobody, input: x }]
events: { retention_s: 99999999 }`),
    );
    expect(problems.join('\n')).toMatch(/triggers\[0\]\.event: must start/);
    expect(problems.join('\n')).toMatch(/events\.retention_s: must be at most 2592000/);
    const unknown = problemsOf(base('triggers: [{ event: ok, agent: nobody, input: x }]'));
    expect(unknown.join('\n')).toMatch(/triggers\[0\]\.agent: unknown agent "nobody"/);
  });
});
