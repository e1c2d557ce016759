import '../config/register-fake-provider.js';
import { describe, expect, it } from 'vitest';
import {
  checkContract,
  checkedFinalAnswer,
  compileContracts,
  contractFor,
  statedConfidence,
} from '../../src/workflows/core/contracts.js';
import { configParser } from '../config/config-parser.js';

const { parse, problemsOf } = configParser();

/** The contracts of a config with agents `writer` and `researcher`, from YAML lines under `contracts:`. */
function contractsOf(lines: readonly string[]) {
  const text = [
    'providers: [{ name: main, kind: fake, model: m }]',
    'agents: [{ name: writer, provider: main }, { name: researcher, provider: main }]',
    'contracts:',
    ...lines.map((line) => `  ${line}`),
  ].join('\n');
  return compileContracts(parse(text).contracts);
}

function check(lines: readonly string[], answer: unknown, timeMs = 10) {
  const [contract] = contractsOf(lines);
  if (!contract) throw new Error('no contract');
  return checkContract(contract, typeof answer === 'string' ? answer : JSON.stringify(answer), timeMs);
}

const field = (rule: string) => [
  '- from_agent: researcher',
  '  to_agent: writer',
  `  schema: { required: { summary: string, score: number, tags: array }, rules: [${rule}] }`,
];
const good = { summary: 'abcdef', score: 0.5, tags: ['x', 'y'] };

describe('handoff contracts: a pass and a fail for each check', () => {
  it.each([
    ['{ field: summary, min_length: 3 }', { ...good, summary: 'ab' }, 'min_length'],
    ['{ field: tags, max_length: 2 }', { ...good, tags: ['a', 'b', 'c'] }, 'max_length'],
    ['{ field: summary, pattern: "^[a-f]+$" }', { ...good, summary: 'xyz' }, 'pattern'],
    ['{ field: score, range: { min: 0, max: 1 } }', { ...good, score: 1.5 }, 'range'],
    ['{ field: summary, enum: [abcdef, other] }', { ...good, summary: 'third' }, 'enum'],
  ])('rule %s', (rule, bad, errorType) => {
    expect(check(field(rule), good)).toEqual({
      contract: 'researcher->writer',
      valid: true,
      errors: [],
      warnings: [],
      schema_version: null,
    });
    const failed = check(field(rule), bad);
    expect(failed.valid).toBe(false);
    expect(failed.errors).toHaveLength(1);
    expect(failed.errors[0]).toMatchObject({ error_type: errorType });
    expect(failed.errors[0]?.field).toMatch(/summary|tags|score/);
  });

  it('required fields and their types; every error is listed, and unnamed fields are a warning', () => {
    const failed = check(field('{ field: summary, min_length: 1 }'), { summary: 5, tags: [], extra: true });
    expect(failed.errors).toEqual([
      { field: 'score', error_type: 'missing_field', message: 'the required field "score" is missing' },
      { field: 'summary', error_type: 'wrong_type', message: 'expected string, got integer' },
      { field: 'summary', error_type: 'wrong_type', message: 'min_length applies to a string or an array' },
    ]);
    expect(failed.warnings).toEqual(['fields the contract does not name: "extra"']);
  });

  it('a result that is not a JSON object fails with why; one ```json block is read', () => {
    const lines = field('{ field: summary, min_length: 1 }');
    expect(check(lines, 'just prose').errors[0]).toMatchObject({ field: '$', error_type: 'invalid_json' });
    expect(check(lines, '[1, 2]').errors[0]).toMatchObject({ field: '$', error_type: 'not_an_object' });
    expect(check(lines, `\`\`\`json\n${JSON.stringify(good)}\n\`\`\``).valid).toBe(true);
  });

  it('a JSON Schema', () => {
    const lines = [
      '- from_agent: researcher',
      '  json_schema: { type: object, required: [score], properties: { score: { type: number, maximum: 1 } } }',
    ];
    expect(check(lines, { score: 0.2 }).valid).toBe(true);
    expect(check(lines, { score: 2 }).errors).toEqual([
      { field: '$.score', error_type: 'json_schema', message: 'must be at most 1' },
    ]);
    expect(check(lines, {}).errors[0]).toMatchObject({ field: '$', error_type: 'json_schema' });
  });

  it('required_confidence and max_execution_time_ms', () => {
    const lines = ['- from_agent: researcher', '  required_confidence: 0.8', '  max_execution_time_ms: 1000'];
    expect(check(lines, { confidence: 0.9 }, 999).valid).toBe(true);
    expect(check(lines, { confidence: 0.5 }, 999).errors).toEqual([
      {
        field: 'confidence',
        error_type: 'low_confidence',
        message: 'confidence 0.5 is below the required 0.8',
      },
    ]);
    expect(check(lines, { answer: 'no confidence' }, 999).errors[0]).toMatchObject({
      error_type: 'missing_confidence',
    });
    expect(check(lines, { confidence: 0.9 }, 1001).errors).toEqual([
      {
        field: 'execution_time_ms',
        error_type: 'too_slow',
        message: "the run took 1001 ms, over the contract's 1000 ms",
      },
    ]);
  });

  it('a hostile result cannot hang a pattern, and a huge one is refused unparsed', () => {
    const lines = field('{ field: summary, pattern: "^(a|a)*b$" }');
    const slow = check(lines, { ...good, summary: `${'a'.repeat(40_000)}!` });
    expect(slow.errors[0]).toMatchObject({ field: 'summary', error_type: 'pattern' });
    expect(check(lines, 'x'.repeat(1_000_001)).errors[0]).toMatchObject({ error_type: 'too_long' });
    // Nesting 200,000 deep: the checks follow the schema, not the value.
    const deep = `{"summary": "abcdef", "score": 0.5, "tags": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const schema = [
      '- from_agent: researcher',
      '  json_schema: { type: object, properties: { tags: { type: array, items: { enum: [[1]] } } } }',
    ];
    expect(check(schema, deep).errors[0]).toMatchObject({ error_type: 'json_schema', field: '$.tags[0]' });
    expect(check(field('{ field: tags, max_length: 2 }'), deep).valid).toBe(true);
  });
});

describe('which contract applies, and what the run records', () => {
  const contracts = contractsOf([
    '- { from_agent: researcher, to_agent: writer, required_confidence: 0.5 }',
    '- { name: final, from_agent: researcher, required_confidence: 0.9 }',
  ]);
  const child = { agent: 'researcher', parent: { run_id: 'r', job_id: 'j', depth: 1 }, lineage: ['writer'] };
  const root = { agent: 'researcher', parent: null, lineage: [] };

  it('a child run is held to the contract towards the agent that delegated; a root run to the output one', () => {
    expect(contractFor(contracts, child)?.name).toBe('researcher->writer');
    expect(contractFor(contracts, root)?.name).toBe('final');
    expect(contractFor(contracts, { ...child, lineage: ['someone'] })).toBeUndefined();
    expect(contractFor(contracts, { ...root, agent: 'writer' })).toBeUndefined();
  });

  it('a breach fails the run with the errors; a pass keeps the check and the stated confidence', () => {
    const times = { started_at: '2026-01-01T00:00:00.000Z', created_at: '2026-01-01T00:00:00.000Z' };
    const now = '2026-01-01T00:00:01.000Z';
    const failed = checkedFinalAnswer(
      contracts,
      { ...root, ...times },
      { kind: 'final', result: '{"confidence":0.6}' },
      now,
    );
    expect(failed).toMatchObject({ kind: 'failed', code: 'contract_violated' });
    expect(failed.kind === 'failed' && failed.message).toBe(
      'the result broke handoff contract "final": [{"field":"confidence","error_type":"low_confidence","message":"confidence 0.6 is below the required 0.9"}]',
    );
    const passed = checkedFinalAnswer(
      contracts,
      { ...child, ...times },
      { kind: 'final', result: '{"confidence":0.6}' },
      now,
    );
    expect(passed).toMatchObject({ kind: 'final', confidence: 0.6, contract: { valid: true } });
    expect(statedConfidence('{"confidence": 2}')).toBeNull();
    expect(statedConfidence('I am 90% sure')).toBeNull();
  });
});

describe('contracts in the config', () => {
  it('names unknown agents and a second contract for the same hand-over, with their paths', () => {
    const text = [
      'providers: [{ name: main, kind: fake, model: m }]',
      'agents: [{ name: writer, provider: main }, { name: researcher, provider: main }]',
      'contracts:',
      '  - { from_agent: reseacher, to_agent: writer, required_confidence: 0.5 }',
      '  - { from_agent: researcher, to_agent: writer, required_confidence: 0.5 }',
      '  - { from_agent: researcher, to_agent: writer, max_execution_time_ms: 10 }',
      '  - { from_agent: researcher }',
      '  - { from_agent: writer, schema: { rules: [{ field: a, between: 1 }] } }',
    ].join('\n');
    const problems = problemsOf(text);
    expect(problems).toContain(
      'contracts[0].from_agent: unknown agent "reseacher" (did you mean "researcher"?)',
    );
    expect(problems.some((problem) => problem.startsWith('contracts[2]: contracts[1] already covers'))).toBe(
      true,
    );
    expect(problems).toContain(
      'contracts[3]: give at least one check: template, schema, json_schema, required_confidence or max_execution_time_ms',
    );
    expect(problems.some((problem) => problem.startsWith('contracts[4].schema.rules[0]'))).toBe(true);
  });
});
