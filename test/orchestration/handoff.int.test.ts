import { afterEach, describe, expect, it } from 'vitest';
import { Harness, type HarnessAgent } from '../helpers/harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const transfer = (to: string) => ({ tool_calls: [{ name: `transfer_to_${to}`, arguments: {} }] });

const members: HarnessAgent[] = [
  {
    name: 'triage',
    script: { rules: [{ when: { role: 'user', contains: 'book' }, reply: transfer('flights') }] },
  },
  {
    name: 'flights',
    toolboxes: ['test'],
    script: {
      rules: [
        {
          when: { role: 'tool', contains: 'transferred to flights' },
          reply: { tool_calls: [{ name: 'add', arguments: { a: 1, b: 1 } }] },
        },
        { when: { role: 'tool', contains: 'sum' }, reply: transfer('hotels') },
        { when: { role: 'tool', contains: 'transfer refused' }, reply: { text: 'flights booked, no hotel' } },
      ],
    },
  },
  {
    name: 'hotels',
    script: {
      rules: [{ when: { role: 'tool', contains: 'transferred to hotels' }, reply: { text: 'hotel booked' } }],
    },
  },
];

async function runGroup(maxHandoffs: number) {
  harness = new Harness({
    agents: members,
    config: {
      handoffs: [{ name: 'support', members: ['triage', 'flights', 'hotels'], max_handoffs: maxHandoffs }],
    },
  });
  await harness.startWorker();
  const { runId, sessionId } = await harness.engine.startRun({ input: 'book a trip', agent: 'support' });
  const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
  const chat = await harness.transcript(sessionId);
  return { run, chat, h: harness };
}

describe('handoff groups', () => {
  it('passes control along transfer_to_<name> calls on one shared chat; the last member answers', async () => {
    const { run, chat, h } = await runGroup(5);
    expect(run.status).toBe('completed');
    expect(run.agent).toBe('support');
    expect(run.result).toBe('hotel booked');
    expect(chat.filter((message) => message.role === 'assistant').map((message) => message.sender)).toEqual([
      'triage',
      'flights',
      'flights',
      'hotels',
    ]);
    // Each member works with its own tools and instructions: flights ran `add` from its toolbox.
    expect(
      chat.some((message) =>
        message.parts.some((part) => part.type === 'tool_result' && part.content === '{"sum":2}'),
      ),
    ).toBe(true);
    const calls = h.modelCalls().map((call) => (call as unknown as { agent: string }).agent);
    expect(calls).toEqual(['triage', 'flights', 'flights', 'hotels']);
  });

  it('refuses a transfer past max_handoffs, so the member in control answers itself', async () => {
    const { run, chat } = await runGroup(1);
    expect(run.status).toBe('completed');
    expect(run.result).toBe('flights booked, no hotel');
    const refused = chat
      .flatMap((message) => message.parts)
      .find((part) => part.type === 'tool_result' && part.is_error);
    expect(refused).toMatchObject({ type: 'tool_result', is_error: true });
    expect(JSON.stringify(refused)).toContain('max_handoffs');
  });

  it('hands over to a team member, which answers as one member from a child run of its own', async () => {
    harness = new Harness({
      agents: [
        {
          name: 'triage',
          script: { rules: [{ when: { role: 'user', contains: 'study' }, reply: transfer('desk') }] },
        },
        {
          name: 'analyst',
          script: { rules: [{ when: { contains: 'study' }, reply: { text: 'analysis done' } }] },
        },
      ],
      config: {
        teams: [{ name: 'desk', members: [{ agent: 'analyst' }], coordinator: { kind: 'sequence' } }],
        handoffs: [{ name: 'front', members: ['triage', 'desk'] }],
      },
    });
    await harness.startWorker();
    const { runId, sessionId } = await harness.engine.startRun({ input: 'study this', agent: 'front' });
    const run = await harness.engine.waitForRun(runId, { timeoutMs: 20_000 });
    expect(run.status).toBe('completed');
    expect(run.result).toBe('analysis done');
    const chat = await harness.transcript(sessionId);
    expect(chat.filter((message) => message.role === 'assistant').map((message) => message.sender)).toEqual([
      'triage',
      'desk',
    ]);
  });

  it('fails the config when a member is unknown', async () => {
    expect(
      () =>
        new Harness({
          agents: members,
          config: { handoffs: [{ name: 'support', members: ['triage', 'flight'] }] },
        }),
    ).toThrow(/handoffs\[0\]\.members\[1\]: unknown agent "flight" \(did you mean "flights"\?\)/);
  });
});
