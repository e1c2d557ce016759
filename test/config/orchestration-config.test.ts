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
