import { describe, expect, it } from 'vitest';
import '../../src/models/index.js';
import { parseConfigText } from '../../src/config/index.js';
import {
  type Capabilities,
  capabilityProblems,
  contractNeeds,
  mergeNeeds,
  missingNeeds,
  needsOf,
  servesAll,
} from '../../src/workflows/core/step-needs.js';

const config = parseConfigText(
  JSON.stringify({
    providers: [{ name: 'main', kind: 'scripted', model: 'm', script: 's.json' }],
    agents: [
      {
        name: 'clerk',
        provider: 'main',
        toolboxes: ['utils', { name: 'files', tools: ['read_file'] }],
        effects: [{ kind: 'trim_tool_results' }],
      },
      { name: 'helper', provider: 'main' },
    ],
    handoffs: [{ name: 'desk', members: ['clerk', 'helper'] }],
    teams: [
      {
        name: 'crew',
        members: [{ agent: 'clerk' }, { agent: 'helper' }],
        coordinator: { kind: 'sequence' },
      },
    ],
  }),
  { env: {}, configDir: '/tmp' },
).config;

const none: Capabilities = {
  agents: [],
  providers: [],
  toolboxes: [],
  tools: [],
  effects: [],
  middleware: [],
  coordinators: [],
  stop_conditions: [],
  mcp_servers: [],
  contract_rules: [],
};

describe('needsOf', () => {
  it("an agent needs its provider, toolboxes, the tools it narrows them to, its effects' and middleware's kinds", () => {
    const clerk = config.agents.find((agent) => agent.name === 'clerk');
    if (!clerk) throw new Error('no clerk');
    expect(needsOf(clerk)).toEqual({
      providers: ['main'],
      toolboxes: ['utils', 'files'],
      tools: ['read_file'],
      effects: ['trim_tool_results'],
      middleware: [],
    });
  });

  it('a handoff group needs its members (they reply in its iterations); a team its coordinator kind (members are child runs)', () => {
    const [desk] = config.handoffs;
    const [crew] = config.teams;
    if (!desk || !crew) throw new Error('no group or team');
    expect(needsOf(desk)).toEqual({ agents: ['clerk', 'helper'] });
    expect(needsOf(crew)).toEqual({ coordinators: ['sequence'] });
  });
});

describe('contractNeeds', () => {
  it('a run bound by contracts needs the rule kinds written in code they name, not the built-in rules', () => {
    const contracts = [
      {
        from_agent: 'clerk',
        schema: {
          required: { total: 'number' },
          rules: [
            { field: 'total', range: { min: 0 } },
            { kind: 'ledger_balances', params: {} },
          ],
        },
      },
      {
        from_agent: 'clerk',
        to_agent: 'boss',
        schema: { rules: [{ kind: 'ledger_balances', field: 'total' }] },
      },
      { from_agent: 'clerk', json_schema: { type: 'object' } },
    ];
    const needs = contractNeeds(contracts);
    expect(needs).toEqual({ contract_rules: ['ledger_balances'] });
    expect(contractNeeds([{ from_agent: 'clerk', schema: { rules: [{ field: 'a', enum: [1] }] } }])).toEqual(
      {},
    );
    expect(missingNeeds(needs, none)).toEqual(['contract_rule:ledger_balances']);
    expect(missingNeeds(needs, { ...none, contract_rules: ['ledger_balances'] })).toEqual([]);
    expect(
      servesAll({ ...none, contract_rules: ['ledger_balances'] }, ['contract_rule:ledger_balances']),
    ).toBe(true);
  });
});

describe('missingNeeds and servesAll', () => {
  const needs = mergeNeeds(
    { tools: ['crm_lookup'], middleware: ['audit'] },
    { tools: ['crm_lookup', 'add'] },
  );

  it('names what a worker lacks, kind by kind, and nothing it has', () => {
    expect(missingNeeds(needs, none)).toEqual(['tool:crm_lookup', 'tool:add', 'middleware:audit']);
    expect(missingNeeds(needs, { ...none, tools: ['add', 'crm_lookup'], middleware: ['audit'] })).toEqual([]);
  });

  it('tells whether another worker serves every missing name', () => {
    const missing = ['tool:crm_lookup', 'middleware:audit'];
    expect(servesAll({ ...none, tools: ['crm_lookup'], middleware: ['audit'] }, missing)).toBe(true);
    expect(servesAll({ ...none, tools: ['crm_lookup'] }, missing)).toBe(false);
    expect(servesAll({ ...none, tools: ['x'] }, ['bogus:x'])).toBe(false);
  });

  it('bounds what a worker advertises, naming the kind', () => {
    const many = Array.from({ length: 2_001 }, (_, index) => `tool_${index}`);
    expect(capabilityProblems({ ...none, tools: many })).toEqual([
      expect.stringContaining('2001 tools, more than the 2000'),
    ]);
    expect(capabilityProblems({ ...none, agents: ['a'.repeat(201)] })[0]).toContain('agents: the name');
    expect(capabilityProblems(none)).toEqual([]);
  });
});
