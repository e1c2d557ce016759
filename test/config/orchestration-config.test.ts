import './register-fake-provider.js';
import { describe, expect, it } from 'vitest';
import { configParser } from './config-parser.js';

const { parse, problemsOf } = configParser();
const base = [
  'providers: [{ name: main, kind: fake, model: m }]',
  'agents: [{ name: writer, provider: main }, { name: critic, provider: main }]',
].join('\n');

describe('handoffs and teams in the config', () => {
  it('fills their defaults', () => {
    const config = parse(
      `${base}\nhandoffs: [{ name: desk, members: [writer, critic] }]\nteams: [{ name: crew, members: [{ agent: writer }], coordinator: { kind: loop } }]`,
    );
    expect(config.handoffs).toEqual([
      { name: 'desk', description: '', prefix: '🤝', members: ['writer', 'critic'], max_handoffs: 10 },
    ]);
    expect(config.teams[0]).toMatchObject({
      prefix: '👥',
      members: [{ agent: 'writer', role: 'member' }],
      coordinator: { kind: 'loop', max_rounds: 3 },
    });
    expect(config.max_delegation_depth).toBe(5);
  });

  it('names each problem at its path: unknown members and providers, clashing names, cycles, bad conditions', () => {
    expect(
      problemsOf(
        [
          base,
          'handoffs:',
          '  - { name: writer, members: [critic, editor] }',
          '  - { name: solo, members: [writer] }',
          'teams:',
          '  - { name: loopy, members: [{ agent: inner }], coordinator: { kind: sequence } }',
          '  - { name: inner, members: [{ agent: loopy }], coordinator: { kind: llm, provider: mian } }',
          '  - { name: waits, members: [{ agent: critic }], coordinator: { kind: round_robin_until, until: {} } }',
        ].join('\n'),
      ),
    ).toEqual([
      'handoffs[0].name: "writer" is already the name of an agent',
      'handoffs[0].members[1]: unknown agent "editor" (known agents: writer, critic, solo, loopy, inner, waits)',
      'handoffs[1].members: a handoff group needs at least two members',
      'teams[0].members: "loopy" contains itself through its members: a team or group cannot be its own member',
      'teams[1].members: "inner" contains itself through its members: a team or group cannot be its own member',
      'teams[1].coordinator.provider: unknown provider "mian" (known providers: main)',
      'teams[2].coordinator.until: give exactly one of `contains`, `state_key` or `state_equals`',
    ]);
  });
});

describe('a team with coordinator.max_rounds: 0 (no round limit)', () => {
  const team = (coordinator: string, options = '') =>
    `${base}\nteams: [{ name: crew, members: [{ agent: writer }, { agent: critic }], coordinator: ${coordinator}${options} }]`;

  it('without a deadline is refused at its path, saying what to set, for every built-in kind with rounds', () => {
    for (const coordinator of [
      '{ kind: loop, max_rounds: 0 }',
      '{ kind: round_robin_until, until: { contains: DONE }, max_rounds: 0 }',
      '{ kind: role_round_robin, max_rounds: 0 }',
      '{ kind: llm, provider: main, max_rounds: 0 }',
    ]) {
      expect(problemsOf(team(coordinator)), coordinator).toEqual([
        'teams[0].coordinator.max_rounds: 0 means no round limit, which needs something else to end a run: set options.timeout_s (a deadline) or budget.tokens / budget.cost_usd on the team, or give max_rounds of 1 or more',
      ]);
    }
  });

  it('with options.timeout_s is no limit, the deadline ending the run', () => {
    const config = parse(team('{ kind: loop, max_rounds: 0 }', ', options: { timeout_s: 600 }'));
    expect(config.teams[0]).toMatchObject({
      coordinator: { kind: 'loop', max_rounds: 0 },
      options: { timeout_s: 600 },
    });
  });

  it('with a team budget of tokens or cost is no limit, the budget ending the run', () => {
    const byTokens = parse(team('{ kind: loop, max_rounds: 0 }', ', budget: { tokens: 50000 }'));
    expect(byTokens.teams[0]).toMatchObject({
      coordinator: { kind: 'loop', max_rounds: 0 },
      budget: { tokens: 50000 },
    });
    const byCost = parse(team('{ kind: llm, provider: main, max_rounds: 0 }', ', budget: { cost_usd: 2.5 }'));
    expect(byCost.teams[0]?.budget).toEqual({ cost_usd: 2.5 });
    // A budget that sets neither limit ends nothing: still refused.
    expect(problemsOf(team('{ kind: loop, max_rounds: 0 }', ', budget: { on_exceeded: ask }'))).toEqual([
      expect.stringMatching(/^teams\[0\]\.coordinator\.max_rounds: 0 means no round limit/),
    ]);
    expect(problemsOf(team('{ kind: loop }', ', budget: { tokens: 0 }'))).toEqual([
      expect.stringMatching(/^teams\[0\]\.budget\.tokens: /),
    ]);
  });

  it("checks the team's options.timeout_s like an agent's", () => {
    expect(problemsOf(team('{ kind: loop }', ', options: { timeout_s: 0 }'))).toEqual([
      expect.stringMatching(/^teams\[0\]\.options\.timeout_s: /),
    ]);
    expect(problemsOf(team('{ kind: loop }', ', options: { timeout_s: 31536001 }'))).toEqual([
      'teams[0].options.timeout_s: must be at most 31536000 (365 days)',
    ]);
    expect(problemsOf(team('{ kind: loop }', ', options: { timeout: 60 }'))).toEqual([
      'teams[0].options.timeout: unknown key (did you mean "timeout_s"?)',
    ]);
    expect(parse(team('{ kind: sequence }')).teams[0]?.options).toEqual({});
  });
});
