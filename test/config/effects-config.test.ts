import './register-fake-provider.js';
import { describe, expect, it } from 'vitest';
import { configParser } from './config-parser.js';

const { parse, problemsOf } = configParser();

function agentConfig(lines: readonly string[]): string {
  return [
    'providers: [{ name: main, kind: fake, model: m }]',
    'agents:',
    '  - name: coder',
    '    provider: main',
    ...lines.map((line) => `    ${line}`),
  ].join('\n');
}

describe('effects and middleware in the config', () => {
  it('fills the defaults: no effects list (the defaults rule applies later), context_threshold 0.8', () => {
    const agent = parse(agentConfig([])).agents[0];
    expect(agent?.effects).toBeUndefined();
    expect(agent?.options).toEqual({
      max_iterations: 10,
      stream: false,
      on_change: 'pin',
      on_busy: 'reject',
      max_queued_messages: 10,
      context_threshold: 0.8,
    });
  });

  it("parses each kind with its params' defaults, and keeps an empty list as no effects", () => {
    const agent = parse(
      agentConfig([
        'effects:',
        '  - kind: compact',
        '  - { kind: trim_tool_results, params: { preserve_recent: 2 } }',
        '  - { kind: sliding_window, params: {} }',
        '  - { kind: observation_mask }',
        '  - { kind: loop_detect, params: { threshold: 4 } }',
        '  - { kind: reflection }',
        '  - { kind: progress, params: { interval: 10 } }',
        'options:',
        '  context_threshold: 0.6',
        '  timeout_s: 600',
        '  output_guardrail: { deny: ["[Pp]assword"], on_fail: retry }',
      ]),
    ).agents[0];
    expect(agent?.effects).toEqual([
      { kind: 'compact', params: {} },
      { kind: 'trim_tool_results', params: { max_result_length: 2000, preserve_recent: 2 } },
      {
        kind: 'sliding_window',
        params: { threshold: 0.7, recent_zone: 8, medium_zone: 8, trim_length: 200 },
      },
      { kind: 'observation_mask', params: { threshold: 0.6, recent_window: 4 } },
      { kind: 'loop_detect', params: { threshold: 4, window_size: 6 } },
      { kind: 'reflection', params: { failure_threshold: 3, save_to_memory: false } },
      { kind: 'progress', params: { interval: 10 } },
    ]);
    expect(agent?.options).toMatchObject({
      context_threshold: 0.6,
      timeout_s: 600,
      output_guardrail: { deny: ['[Pp]assword'], allow: [], on_fail: 'retry', max_retries: 2 },
    });
    expect(parse(agentConfig(['effects: []'])).agents[0]?.effects).toEqual([]);
  });

  it('names an unknown effect kind at its path, with a did-you-mean and the known kinds', () => {
    expect(problemsOf(agentConfig(['effects:', '  - { kind: compcat }', '  - { kind: summarize }']))).toEqual(
      [
        'agents[0].effects[0].kind: unknown effect kind "compcat" (did you mean "compact"?); known kinds: ' +
          'compact, trim_tool_results, sliding_window, observation_mask, loop_detect, reflection, progress',
        'agents[0].effects[1].kind: unknown effect kind "summarize"; known kinds: compact, trim_tool_results, ' +
          'sliding_window, observation_mask, loop_detect, reflection, progress',
      ],
    );
  });

  it('names a missing kind, an unknown key beside it, and an entry that is not a mapping', () => {
    expect(
      problemsOf(
        agentConfig([
          'effects:',
          '  - { params: { threshold: 0.5 } }',
          '  - { kind: progress, parms: {} }',
          '  - compact',
        ]),
      ),
    ).toEqual([
      'agents[0].effects[0].kind: expected an effect kind (one of: compact, trim_tool_results, sliding_window, ' +
        'observation_mask, loop_detect, reflection, progress)',
      'agents[0].effects[1].parms: unknown key (did you mean "params"?)',
      'agents[0].effects[2]: expected a mapping {kind, params}, got "compact"',
    ]);
  });

  it('names bad params at their path, unknown ones with a did-you-mean from the kind', () => {
    expect(
      problemsOf(
        agentConfig([
          'effects:',
          '  - { kind: compact, params: { threshold: 1.5 } }',
          '  - { kind: trim_tool_results, params: { max_result_lenght: 100, preserve_recent: -1 } }',
          '  - { kind: loop_detect, params: { threshold: 8, window_size: 4 } }',
          '  - { kind: progress, params: { interval: "often" } }',
          '  - { kind: reflection, params: { treshold: 2 } }',
        ]),
      ),
    ).toEqual([
      'agents[0].effects[0].params.threshold: must be at most 1',
      'agents[0].effects[1].params.max_result_lenght: unknown key (did you mean "max_result_length"?)',
      'agents[0].effects[1].params.preserve_recent: must be at least 0',
      'agents[0].effects[2].params.threshold: threshold must not be larger than window_size',
      'agents[0].effects[3].params.interval: expected an integer, got "often"',
      'agents[0].effects[4].params.treshold: unknown key (expected one of: failure_threshold, save_to_memory)',
    ]);
  });

  it('refuses a reflection saved to memory by an agent without the memory toolbox, and names the fix', () => {
    const reflection = '  - { kind: reflection, params: { save_to_memory: true } }';
    expect(problemsOf(agentConfig(['effects:', reflection]))).toEqual([
      'agents[0].effects[0].params.save_to_memory: a reflection is saved to the agent\'s memory, which it has only with the "memory" toolbox: add "memory" to the agent\'s toolboxes, or leave save_to_memory out',
    ]);
    const withMemory = parse(agentConfig(['toolboxes: [memory]', 'effects:', reflection])).agents[0];
    expect(withMemory?.effects?.[0]).toEqual({
      kind: 'reflection',
      params: { failure_threshold: 3, save_to_memory: true },
    });
  });

  it('checks context_threshold and timeout_s, and suggests option names', () => {
    expect(
      problemsOf(agentConfig(['options:', '  context_threshold: 0', '  timeout_s: 1.5', '  timeout: 10'])),
    ).toEqual([
      'agents[0].options.context_threshold: must be greater than 0',
      'agents[0].options.timeout_s: expected an integer, got 1.5',
      'agents[0].options.timeout: unknown key (did you mean "timeout_s"?)',
    ]);
    expect(problemsOf(agentConfig(['options: { context_threshold: 1.01 }']))).toEqual([
      'agents[0].options.context_threshold: must be at most 1',
    ]);
  });

  it('checks output_guardrail: its patterns, its JSON Schema keywords, on_fail, and that it checks something', () => {
    expect(
      problemsOf(
        agentConfig([
          'options:',
          '  output_guardrail:',
          '    deny: ["(a+)+$", "(unclosed"]',
          '    allow: ["(?=x)y"]',
          '    json_schema: { type: object, properties: { n: { type: int, minimun: 0 } }, patternProperties: {} }',
          '    on_fail: retyr',
          '    max_retrys: 1',
        ]),
      ),
    ).toEqual([
      'agents[0].options.output_guardrail.deny[0]: unsafe regular expression: a repeated group contains a ' +
        'repetition itself (nested quantifiers backtrack exponentially)',
      expect.stringMatching(
        /^agents\[0\]\.options\.output_guardrail\.deny\[1\]: not a valid regular expression: /,
      ),
      'agents[0].options.output_guardrail.allow[0]: unsafe regular expression: lookarounds are not allowed',
      'agents[0].options.output_guardrail.json_schema.properties.n.type: expected a JSON Schema type (string, ' +
        'number, integer, boolean, object, array, null) or a list of them',
      'agents[0].options.output_guardrail.json_schema.properties.n.minimun: unknown key (did you mean "minimum"?)',
      'agents[0].options.output_guardrail.json_schema.patternProperties: unknown key (expected one of: type, ' +
        'enum, const, properties, required, additionalProperties, items, minItems, maxItems, minLength, ' +
        'maxLength, pattern, minimum, maximum, title, description)',
      'agents[0].options.output_guardrail.on_fail: must be one of "fail", "retry"',
      'agents[0].options.output_guardrail.max_retrys: unknown key (did you mean "max_retries"?)',
    ]);
    expect(problemsOf(agentConfig(['options: { output_guardrail: { on_fail: retry } }']))).toEqual([
      'agents[0].options.output_guardrail: give at least one check: deny, allow, max_length or json_schema',
    ]);
  });
});

describe('supervisor and output_schema in the config', () => {
  it('fills the supervisor defaults and takes an output schema', () => {
    const agent = parse(
      agentConfig([
        'options:',
        '  supervisor: {}',
        '  output_schema: { type: object, required: [answer] }',
        '  output_schema_retries: 1',
      ]),
    ).agents[0];
    expect(agent?.options).toMatchObject({
      supervisor: { max_sub_goals: 5, max_orchestration_steps: 20 },
      output_schema: { type: 'object', required: ['answer'] },
      output_schema_retries: 1,
    });
  });

  it('names the path of a bad supervisor limit or schema keyword', () => {
    const problems = problemsOf(
      agentConfig([
        'options:',
        '  supervisor: { max_sub_goals: 0, max_steps: 3 }',
        '  output_schema: { type: objekt, minProperties: 1 }',
      ]),
    );
    expect(
      problems.some((problem) => problem.startsWith('agents[0].options.supervisor.max_sub_goals:')),
    ).toBe(true);
    expect(problems.some((problem) => problem.startsWith('agents[0].options.supervisor'))).toBe(true);
    expect(problems.some((problem) => problem.startsWith('agents[0].options.output_schema'))).toBe(true);
    expect(problems.join('\n')).toContain('max_steps');
  });
});
