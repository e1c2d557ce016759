import './register-fake-provider.js';
import { describe, expect, it } from 'vitest';
import { configParser } from './config-parser.js';

const { parse, problemsOf } = configParser();

const head = [
  'providers: [{ name: main, kind: fake, model: m }]',
  'agents:',
  '  - name: writer',
  '    provider: main',
  '  - name: researcher',
  '    provider: main',
];

/** A config whose writer has an output guardrail with `guardrail` (YAML flow mapping). */
const withGuardrail = (guardrail: string) =>
  [...head, '    options:', `      output_guardrail: ${guardrail}`].join('\n');

/** A config with the given lines under `contracts:`. */
const withContracts = (...lines: string[]) =>
  [...head, 'contracts:', ...lines.map((line) => `  ${line}`)].join('\n');

describe('patterns written as /regex/flags literals', () => {
  it('are refused at their path, with the pattern without slashes and both cases spelled out for `i`', () => {
    const problems = problemsOf(withGuardrail('{ deny: ["/password/i", "ok"] }'));
    expect(problems).toEqual([
      'agents[1].options.output_guardrail.deny[0]: looks like a /pattern/i literal, which would match the ' +
        'slashes and flag letters themselves: write the pattern without the slashes: "password"; patterns ' +
        'take no flags (there is no flags field): for a case-insensitive match spell both cases, ' +
        '"[Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd]" (to match slashes, escape them: "\\/")',
    ]);
  });

  it('are refused without flags, with other flags, in allow lists, JSON Schemas and contract rules', () => {
    expect(problemsOf(withGuardrail('{ allow: ["/^done$/"] }'))).toEqual([
      expect.stringMatching(
        /^agents\[1\]\.options\.output_guardrail\.allow\[0\]: looks like a \/pattern\/ literal.*without the slashes: "\^done\$" \(/,
      ),
    ]);
    expect(problemsOf(withGuardrail('{ json_schema: { type: string, pattern: "/^a\\\\d+/gm" } }'))).toEqual([
      expect.stringMatching(/json_schema\.pattern: .*"\^a\\d\+"; patterns take no flags .*drop "gm"/),
    ]);
    expect(
      problemsOf(
        withContracts(
          '- { from_agent: researcher, to_agent: writer, schema: { required: { id: string }, rules: [{ field: id, pattern: "/ID-[0-9]+/i" }] } }',
        ),
      ),
    ).toEqual([
      expect.stringMatching(/^contracts\[0\]\.schema\.rules\[0\]\.pattern: .*"\[Ii\]\[Dd\]-\[0-9\]\+"/),
    ]);
  });

  it('still accepts slashes that are part of the pattern', () => {
    const config = parse(withGuardrail('{ deny: ["\\\\/etc\\\\/passwd", "/etc/passwd", "a/b/"] }'));
    expect(config.agents[1]?.options.output_guardrail?.deny).toEqual([
      '\\/etc\\/passwd',
      '/etc/passwd',
      'a/b/',
    ]);
  });
});

describe('contract checks that could never do what they say', () => {
  it('a rule on a field listed neither in required nor optional is an error at the rule, with a hint', () => {
    const problems = problemsOf(
      withContracts(
        '- from_agent: researcher',
        '  to_agent: writer',
        '  schema:',
        '    required: { summary: string }',
        '    optional: { score: number }',
        '    rules: [{ field: sumary, min_length: 3 }, { field: score, range: { min: 0 } }, { field: tags, max_length: 2 }]',
      ),
    );
    expect(problems).toEqual([
      'contracts[0].schema.rules[0].field: field "sumary" is listed neither in required nor in optional (did you mean "summary"?)',
      'contracts[0].schema.rules[2].field: field "tags" is listed neither in required nor in optional: add it to one of them with its type (e.g. optional: { tags: string })',
    ]);
  });

  it('a range whose min is over its max is an error naming both', () => {
    const problems = problemsOf(
      withContracts(
        '- { from_agent: researcher, schema: { required: { n: number }, rules: [{ field: n, range: { min: 1, max: 0 } }] } }',
      ),
    );
    expect(problems).toEqual([
      'contracts[0].schema.rules[0].range.max: max (0) is less than min (1), so no value is in range: swap them',
    ]);
    // A range of one value is fine.
    expect(() =>
      parse(
        withContracts(
          '- { from_agent: researcher, schema: { required: { n: number }, rules: [{ field: n, range: { min: 1, max: 1 } }] } }',
        ),
      ),
    ).not.toThrow();
  });

  it('a contract from an agent to itself is an error at its to_agent', () => {
    expect(
      problemsOf(withContracts('- { from_agent: writer, to_agent: writer, required_confidence: 0.5 }')),
    ).toEqual([
      'contracts[0].to_agent: a contract from "writer" to itself never applies (an agent cannot delegate to itself): name the agent that delegates to it, or leave to_agent out to check what it answers a session',
    ]);
  });
});
