import { describe, expect, it } from 'vitest';
import {
  hasLinearRegExpEngine,
  outputGuardrailSchema,
  patternProblem,
  unsafePatternReason,
} from '../../../src/config/index.js';
import {
  createOutputCheck,
  guardrailVerdict,
  regexInputLimit,
} from '../../../src/workflows/core/guardrails.js';

function check(config: unknown, answer: string) {
  return createOutputCheck(outputGuardrailSchema.parse(config))(answer);
}

/**
 * Runs `action` and fails the test when it uses more than `limitMs` of this process's CPU time: what a
 * backtracking pattern would burn. CPU time, not wall time, so other processes on a loaded machine (the full
 * suite's, a CI neighbour's) do not count: wall time here once read 1,064 ms at a load average of 25.
 */
function quickly<T>(action: () => T, limitMs = 1000): T {
  const started = process.cpuUsage();
  const result = action();
  const used = process.cpuUsage(started);
  expect((used.user + used.system) / 1000).toBeLessThan(limitMs);
  return result;
}

describe('output guardrail checks', () => {
  it('deny: fails an answer that any denied pattern matches', () => {
    const config = { deny: ['[Pp]assword\\s*[:=]', 'BEGIN [A-Z]+ PRIVATE KEY'] };
    expect(check(config, 'All done.')).toEqual({ ok: true });
    expect(check(config, 'the Password: hunter2')).toEqual({
      ok: false,
      reason: 'the answer matches the denied pattern /[Pp]assword\\s*[:=]/',
    });
  });

  it('allow: fails an answer that no allowed pattern matches', () => {
    const config = { allow: ['^DONE\\b', '^FAILED\\b'] };
    expect(check(config, 'DONE: 3 files')).toEqual({ ok: true });
    expect(check(config, 'I think it is done')).toEqual({
      ok: false,
      reason: 'the answer matches none of the allowed patterns (/^DONE\\b/, /^FAILED\\b/)',
    });
  });

  it('max_length: fails a longer answer', () => {
    expect(check({ max_length: 5 }, 'short')).toEqual({ ok: true });
    expect(check({ max_length: 5 }, 'longer')).toEqual({
      ok: false,
      reason: 'the answer is 6 characters long, over the limit of 5',
    });
  });

  describe('json_schema', () => {
    const config = {
      json_schema: {
        type: 'object',
        required: ['status', 'files'],
        additionalProperties: false,
        properties: {
          status: { enum: ['ok', 'failed'] },
          files: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^src/', maxLength: 20 } },
          score: { type: 'integer', minimum: 0, maximum: 10 },
          note: { type: ['string', 'null'], minLength: 2 },
        },
      },
    };

    it('accepts valid JSON, also as one fenced json block', () => {
      expect(check(config, '{"status":"ok","files":["src/a.ts"],"score":7,"note":null}')).toEqual({
        ok: true,
      });
      expect(check(config, '```json\n{"files":["src/a.ts"],"status":"failed"}\n```')).toEqual({ ok: true });
    });

    it.each([
      ['not JSON', 'Sure! {"status": "ok"}', 'the answer is not valid JSON'],
      ['a missing property', '{"status":"ok"}', '$: the property "files" is required'],
      [
        'a value outside the enum',
        '{"status":"meh","files":["src/a"]}',
        '$.status: must be one of "ok", "failed"',
      ],
      [
        'an item of the wrong type',
        '{"status":"ok","files":[3]}',
        '$.files[0]: expected string, got integer',
      ],
      ['a pattern', '{"status":"ok","files":["lib/a"]}', '$.files[0]: must match the pattern /^src//'],
      ['maxLength', `{"status":"ok","files":["src/${'a'.repeat(20)}"]}`, '$.files[0]: must be at most 20'],
      ['minItems', '{"status":"ok","files":[]}', '$.files: must have at least 1 items'],
      ['integer', '{"status":"ok","files":["src/a"],"score":1.5}', '$.score: expected integer, got number'],
      ['maximum', '{"status":"ok","files":["src/a"],"score":11}', '$.score: must be at most 10'],
      ['minLength', '{"status":"ok","files":["src/a"],"note":"x"}', '$.note: must be at least 2 characters'],
      [
        'an extra property',
        '{"status":"ok","files":["src/a"],"extra":1}',
        '$: the property "extra" is not allowed',
      ],
      ['the wrong top-level type', '[1]', '$: expected object, got array'],
    ])('fails %s', (_what, answer, reason) => {
      const result = check(config, answer);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.reason).toContain(reason);
    });
  });

  describe('against hostile answers', () => {
    it('runs patterns on the linear-time engine on this runtime', () => {
      expect(hasLinearRegExpEngine()).toBe(true);
      expect(regexInputLimit()).toBe(50_000);
    });

    it('fails a 1 MB answer closed and at once when a pattern would have to read it', () => {
      const huge = 'a'.repeat(1_000_000);
      const result = quickly(() => check({ deny: ['secret'] }, huge));
      expect(result).toEqual({
        ok: false,
        reason:
          'the answer is 1000000 characters long, too long to check against the patterns (at most 50000)',
      });
      expect(quickly(() => check({ max_length: 10_000, allow: ['^a+$'] }, huge))).toMatchObject({
        ok: false,
        reason: 'the answer is 1000000 characters long, over the limit of 10000',
      });
      const hugeJson = JSON.stringify({
        status: 'ok',
        files: Array.from({ length: 50_000 }, () => 'src/x.ts'),
      });
      expect(hugeJson.length).toBeGreaterThan(500_000);
      expect(
        quickly(() =>
          check(
            { json_schema: { properties: { files: { items: { pattern: '^src/.*\\.ts$' } } } } },
            hugeJson,
          ),
        ),
      ).toEqual({ ok: true });
    });

    it('answers at once for a backtracking-style answer against patterns that backtrack on such input', () => {
      // Patterns the config accepts (no nested quantifiers) that a backtracking engine runs in polynomial
      // time; the linear engine does not care.
      const answer = `${'a'.repeat(regexInputLimit() - 1)}!`;
      expect(quickly(() => check({ allow: ['a*a*b'] }, answer), 500).ok).toBe(false);
      expect(quickly(() => check({ deny: ['\\s+$', '^.*.*=.*;$'] }, ' '.repeat(49_999)), 500).ok).toBe(false);
      expect(
        quickly(
          () => check({ json_schema: { type: 'string', pattern: '^(a|aa)*c' } }, JSON.stringify(answer)),
          500,
        ).ok,
      ).toBe(false);
    });
  });
});

describe('config patterns', () => {
  it.each([
    ['(a+)+$', 'a repeated group contains a repetition itself'],
    ['^(\\w+\\s?)*$', 'a repeated group contains a repetition itself'],
    ['(?:x{2,})+', 'a repeated group contains a repetition itself'],
    ['((ab)*c)*', 'a repeated group contains a repetition itself'],
    ['(a)\\1', 'backreferences are not allowed'],
    ['(?<q>a)\\k<q>', 'backreferences are not allowed'],
    ['(?=a)b', 'lookarounds are not allowed'],
    ['(?<!a)b', 'lookarounds are not allowed'],
    ['\\p{L}', 'Unicode property escapes'],
  ])('refuses %s', (source, reason) => {
    expect(unsafePatternReason(source)).toContain(reason);
  });

  it.each(['^DONE\\b', '(ab){3}', '(a{2})+', '[(+*]+', '\\(a+\\)+', '(?:ab)*?c', '(?<name>x)y', 'a*a*b'])(
    'accepts %s',
    (source) => {
      expect(patternProblem(source)).toBeUndefined();
    },
  );

  it('reports a pattern that does not compile', () => {
    expect(patternProblem('(unclosed')).toMatch(/^not a valid regular expression: /);
  });
});

describe('the verdict on a checked answer', () => {
  const failed = { ok: false as const, reason: 'the answer is 6 characters long, over the limit of 5' };

  it('accepts a passing answer', () => {
    expect(guardrailVerdict({ on_fail: 'retry', max_retries: 2 }, { ok: true }, 2)).toEqual({
      kind: 'accept',
    });
  });

  it('with on_fail: fail, fails the run at once', () => {
    expect(guardrailVerdict({ on_fail: 'fail', max_retries: 2 }, failed, 0)).toEqual({
      kind: 'fail',
      code: 'guardrail_failed',
      message:
        'the final answer failed the output guardrail: the answer is 6 characters long, over the limit of 5',
    });
  });

  it('with on_fail: retry, sends the answer back max_retries times, then fails', () => {
    const config = { on_fail: 'retry' as const, max_retries: 2 };
    expect(guardrailVerdict(config, failed, 0)).toEqual({
      kind: 'retry',
      retry: 1,
      feedback:
        'Your answer was not accepted: the answer is 6 characters long, over the limit of 5. Answer again, ' +
        'correcting this (attempt 2 of 3).',
    });
    expect(guardrailVerdict(config, failed, 1)).toMatchObject({ kind: 'retry', retry: 2 });
    expect(guardrailVerdict(config, failed, 2)).toEqual({
      kind: 'fail',
      code: 'guardrail_failed',
      message:
        'the final answer failed the output guardrail after 2 retries: the answer is 6 characters long, over ' +
        'the limit of 5',
    });
  });
});
