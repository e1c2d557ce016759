import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Harness, type HarnessAgent, type HarnessOptions } from '../helpers/harness.js';
import { crashTreeAndTakeOver, referenceTree, type TreeSnapshot } from '../helpers/run-tree.js';

/**
 * The llm coordinator keeps its own chat across turns: each request holds the latest `window` shared
 * messages with what it decided at each earlier turn (and why) between them. It is built from the run as
 * recorded, so a turn that runs again after a SIGKILL sends the same request, and a decision once recorded is
 * not asked for again.
 */
const agents: HarnessAgent[] = [
  { name: 'alpha', script: { default: { text: 'alpha speaks' } } },
  { name: 'beta', script: { default: { text: 'beta concludes' } } },
  {
    name: 'boss',
    script: {
      rules: [
        {
          when: { contains: '[beta]' },
          reply: { text: '{"members": [], "done": true, "reason": "beta concluded"}' },
        },
        {
          when: { contains: '[alpha]' },
          reply: { text: '{"members": ["beta"], "done": false, "reason": "beta should check alpha"}' },
        },
      ],
      default: { text: '{"members": ["alpha"], "done": false, "reason": "alpha starts"}' },
    },
  },
];
const team = (coordinator: Record<string, unknown> = {}) => ({
  agents,
  config: {
    teams: [
      {
        name: 'board',
        members: [{ agent: 'alpha' }, { agent: 'beta' }],
        coordinator: { kind: 'llm', provider: 'model-boss', ...coordinator },
      },
    ],
  },
});
const start = { input: 'write about owls', agent: 'board' };

type Call = ReturnType<Harness['modelCalls']>[number];
const coordinatorCalls = (h: Harness) => h.modelCalls().filter((call) => call.agent === 'board-coordinator');
/** A request as the model saw it, the system prompt aside. */
const chatOf = (call: Call | undefined) =>
  call?.messages.slice(1).map((message) => [message.role, message.text]);

const harnesses: Harness[] = [];
const harness = (options: HarnessOptions = team()) => {
  const h = new Harness(options);
  harnesses.push(h);
  return h;
};
afterEach(async () => {
  await Promise.allSettled(harnesses.splice(0).map((h) => h.close()));
});

describe("the llm coordinator's chat", () => {
  it('holds what it decided and why at the earlier turns, between the shared messages', async () => {
    const h = harness();
    const reference = await referenceTree(h, start);
    expect(reference.result).toBe('beta concludes');
    const calls = coordinatorCalls(h);
    expect(calls.map((call) => call.iteration)).toEqual([1, 2, 3]);
    expect(calls[0]?.system).toContain('"reason"');
    expect(chatOf(calls[2])).toEqual([
      ['user', '[user] write about owls'],
      ['assistant', '{"members":["alpha"],"done":false,"reason":"alpha starts"}'],
      ['user', '[alpha] alpha speaks'],
      ['assistant', '{"members":["beta"],"done":false,"reason":"beta should check alpha"}'],
      ['user', '[beta] beta concludes'],
    ]);
  });

  it('shows only the latest `window` shared messages, with the decisions made on them', async () => {
    const h = harness(team({ window: 1 }));
    await referenceTree(h, start);
    expect(chatOf(coordinatorCalls(h)[2])).toEqual([
      ['user', '(2 earlier messages of the conversation are not shown)\n\n[beta] beta concludes'],
    ]);
  });

  it("lists each member with its role and its agent's description in the system prompt", async () => {
    const [alpha, beta, boss] = agents;
    const h = harness({
      agents: [
        { ...(alpha as HarnessAgent), description: 'Digs up facts about birds.' },
        // No description: the member is listed by name and role alone.
        { ...(beta as HarnessAgent), description: '' },
        boss as HarnessAgent,
      ],
      config: {
        teams: [
          {
            name: 'board',
            members: [{ agent: 'alpha', role: 'researcher' }, { agent: 'beta' }],
            coordinator: { kind: 'llm', provider: 'model-boss' },
          },
        ],
      },
    });
    await referenceTree(h, start);
    const calls = coordinatorCalls(h);
    expect(calls).toHaveLength(3);
    for (const call of calls) {
      const lines = call.system.split('\n');
      const listed = lines.slice(lines.indexOf('You coordinate the team "board". Its members:') + 2);
      expect(listed.slice(0, 2)).toEqual([
        '- alpha (role: researcher): Digs up facts about birds.',
        '- beta (role: member)',
      ]);
    }
  });

  it('refuses a window outside 1 to 1000, naming the field', () => {
    expect(() => harness(team({ window: 0 }))).toThrow(/teams\[0\]\.coordinator\.window/);
    expect(() => harness(team({ window: 1001 }))).toThrow(/teams\[0\]\.coordinator\.window/);
  });
});

describe("the llm coordinator's chat under SIGKILL", () => {
  let reference: TreeSnapshot;
  let referenceCalls: Call[];
  const referenceOnce = async () => {
    if (reference) return;
    const h = harness();
    reference = await referenceTree(h, start);
    referenceCalls = coordinatorCalls(h);
  };
  afterAll(async () => {
    await Promise.allSettled(harnesses.map((h) => h.close()));
  });

  it('its reply in hand, not recorded (team.before_selection_commit@2): turn 2 asks again, sending the same', async () => {
    await referenceOnce();
    const h = harness();
    expect(await crashTreeAndTakeOver(h, start, 'team.before_selection_commit@2')).toEqual(reference);
    const calls = coordinatorCalls(h);
    const second = calls.filter((call) => call.iteration === 2);
    expect(second).toHaveLength(2);
    expect(second[1]?.messages).toEqual(second[0]?.messages);
    // The same requests as without the crash, turn 2's twice (ids aside: they hold the run's id).
    expect(calls.map(chatOf)).toEqual(
      [...referenceCalls.slice(0, 2), ...referenceCalls.slice(1)].map(chatOf),
    );
  });

  it('its reply recorded (team.after_selection_commit@2): turn 2 is not asked again', async () => {
    await referenceOnce();
    const h = harness();
    expect(await crashTreeAndTakeOver(h, start, 'team.after_selection_commit@2')).toEqual(reference);
    expect(coordinatorCalls(h).map(chatOf)).toEqual(referenceCalls.map(chatOf));
  });
});
