import '../config/register-fake-provider.js';
import { describe, expect, it } from 'vitest';
import { bad, good, ticketId } from '../../examples/contract-check.js';
import { parseConfigText } from '../../src/config/index.js';
import { defineContractRule, validateAgainstContract } from '../../src/index.js';
import { boundedVerdict, compileContracts } from '../../src/workflows/core/contracts.js';
import { configParser } from '../config/config-parser.js';

// Contracts as a library (decision 0042): templates, schema versions, rule kinds written in code, and the
// standalone validator, without Redis.
const extensions = { contractRules: [ticketId] };
const { parse, problemsOf } = configParser({ extensions });

const head = [
  'providers: [{ name: main, kind: fake, model: m }]',
  'agents: [{ name: writer, provider: main }, { name: researcher, provider: main }]',
];
const withContracts = (...lines: string[]) =>
  [...head, 'contracts:', ...lines.map((line) => `  ${line}`)].join('\n');

describe('the example (examples/contract-check.ts)', () => {
  it('passes a good value and names each error of a bad one at its path', () => {
    expect(good).toEqual({
      contract: 'triage-report',
      valid: true,
      schema_version: '2.0',
      errors: [],
      warnings: [],
    });
    expect(bad.valid).toBe(false);
    expect(bad.errors).toEqual([
      { path: '$.summary', error_type: 'min_length', message: 'length 0 is below the minimum of 1' },
      { path: '$.confidence', error_type: 'range', message: '1.4 is outside 0..1' },
      { path: '$.ticket', error_type: 'ticket_id', message: 'unknown project HR: expected one of OPS, WEB' },
    ]);
  });
});

describe('contract templates', () => {
  it("expand into the contract's schema when the config is read; the contract's own fields and rules add to them", () => {
    const [contract] = parse(
      withContracts(
        '- from_agent: researcher',
        '  template: api_response',
        '  schema: { optional: { request_id: string }, rules: [{ field: status, enum: [200, 201] }] }',
      ),
    ).contracts;
    expect(contract?.template).toBe('api_response');
    expect(contract?.schema).toEqual({
      required: { status: 'integer' },
      optional: { data: 'object', error: 'string', headers: 'object', request_id: 'string' },
      rules: [
        { field: 'status', range: { min: 100, max: 599 } },
        { field: 'status', enum: [200, 201] },
      ],
    });
  });

  it.each([
    ['database_record', { table: 'users', records: [{ id: 1 }], count: 1, as_of: '2026-12-06T09:00:00Z' }],
    ['analysis_result', { summary: 'fine', findings: [], confidence: 0.5 }],
    ['api_response', { status: 404, error: 'not found' }],
  ])('%s: a typical value passes, an empty object names the required fields', async (template, value) => {
    const loaded = parseConfigText(
      withContracts(`- { name: c, from_agent: researcher, template: ${template} }`),
      {
        env: {},
        configDir: '/configs',
      },
    );
    expect((await validateAgainstContract('c', value, { config: loaded })).valid).toBe(true);
    const empty = await validateAgainstContract('c', {}, { config: loaded });
    expect(empty.errors.every((error) => error.error_type === 'missing_field')).toBe(true);
    expect(empty.errors.length).toBeGreaterThan(0);
  });
});

describe('contracts in the config', () => {
  it('names an unknown template, a bad schema_version, an unknown rule kind and its bad params, with paths', () => {
    const problems = problemsOf(
      withContracts(
        '- { from_agent: researcher, template: api_reponse }',
        '- { from_agent: writer, required_confidence: 0.5, schema_version: "1 beta" }',
        '- from_agent: researcher',
        '  to_agent: writer',
        '  schema:',
        '    required: { ticket: string }',
        '    rules: [{ kind: ticket_ids, field: ticket }, { kind: ticket_id, field: ticket, params: { project: [A] } }]',
      ),
    );
    expect(problems).toContain(
      'contracts[0].template: expected a contract template: database_record, analysis_result, api_response',
    );
    expect(problems.find((problem) => problem.startsWith('contracts[1].schema_version'))).toContain(
      'expected a schema version',
    );
    expect(problems.find((problem) => problem.startsWith('contracts[2].schema.rules[0].kind'))).toContain(
      'unknown contract rule kind "ticket_ids" (did you mean "ticket_id"?)',
    );
    expect(
      problems.some((problem) => problem.startsWith('contracts[2].schema.rules[1].params.project')),
    ).toBe(true);
  });

  it("accepts a rule on a template's field, and output_schema_version on an agent", () => {
    const config = parse(
      [
        'providers: [{ name: main, kind: fake, model: m }]',
        'agents:',
        '  - name: writer',
        '    provider: main',
        '    options: { output_schema: { type: object }, output_schema_version: "2026-12" }',
        'contracts:',
        '  - { from_agent: writer, template: analysis_result, schema: { rules: [{ field: summary, max_length: 9 }] } }',
      ].join('\n'),
    );
    expect(config.agents[0]?.options.output_schema_version).toBe('2026-12');
    expect(config.contracts[0]?.schema?.rules.at(-1)).toEqual({ field: 'summary', max_length: 9 });
  });
});

describe('a code rule as the check keeps it', () => {
  it('is bounded: at most 20 problems of at most 1,000 characters (a rule is foreign code)', () => {
    const verdict = boundedVerdict(Array.from({ length: 25 }, () => 'x'.repeat(2_000)));
    expect(verdict).toHaveLength(21);
    expect(verdict[0]).toHaveLength(1_001);
    expect(verdict[20]).toBe('and 5 more problems');
    expect(boundedVerdict(undefined)).toEqual([]);
  });

  it('without a verdict (a check made without running it) is an error, not a pass', async () => {
    const [contract] = compileContracts(
      parse(
        withContracts(
          '- from_agent: researcher',
          '  schema: { required: { t: string }, rules: [{ kind: ticket_id, field: t, params: { projects: [A] } }] }',
        ),
      ).contracts,
    );
    const { checkContract } = await import('../../src/workflows/core/contracts.js');
    if (!contract) throw new Error('no contract');
    expect(checkContract(contract, '{"t": "A-1"}', 0).errors).toEqual([
      { field: 't', error_type: 'ticket_id', message: 'rule "ticket_id" gave no verdict' },
    ]);
  });

  const boom = defineContractRule({
    kind: 'boom',
    check: () => {
      throw new Error('no');
    },
  });

  it('that throws is contract_rule_failed, naming the rule; an unknown contract names those there are', async () => {
    const loaded = parseConfigText(
      withContracts(
        '- { name: c, from_agent: researcher, schema: { required: { t: string }, rules: [{ kind: boom }] } }',
      ),
      {
        env: {},
        configDir: '/configs',
        extensions: { contractRules: [boom] },
      },
    );
    await expect(validateAgainstContract('c', { t: 'x' }, { config: loaded })).rejects.toThrow(
      'contract rule "boom" of contract "c" failed: no',
    );
    await expect(validateAgainstContract('d', {}, { config: loaded })).rejects.toThrow(
      'no contract named "d" (its contracts: c)',
    );
  });
});
