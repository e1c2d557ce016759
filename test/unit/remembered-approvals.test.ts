import { describe, expect, it } from 'vitest';
import { normalizeResponse } from '../../src/workflows/question-answers.js';
import type { QuestionRecord } from '../../src/workflows/question-record.js';
import { approvalAnswerSchema } from '../../src/workflows/question-record.js';
import {
  approvalCovers,
  canonicalJson,
  matchingApproval,
  maxPathPrefixLength,
  type Remember,
  rememberedApprovalOf,
} from '../../src/workflows/remembered-approval-match.js';

const now = '2026-12-06T10:00:00.000Z';
function ruleFor(remember: Remember, args: Record<string, unknown> = {}, tool = 'write_file') {
  return rememberedApprovalOf(
    remember,
    { id: 'q-1', agent: 'agent', tool: { name: tool, arguments: JSON.stringify(args) } },
    now,
  );
}
const call = (args: unknown, name = 'write_file') => ({ name, arguments: JSON.stringify(args) });

describe('remembered approvals: what a rule covers (attacker inputs)', () => {
  it('a path prefix covers paths inside it, never a sibling prefix or a ../ escape', () => {
    const rule = ruleFor({ path_prefix: '/a/b' });
    expect(rule.path_prefix).toBe('/a/b');
    expect(approvalCovers(rule, call({ path: '/a/b' }))).toBe(true);
    expect(approvalCovers(rule, call({ path: '/a/b/c.txt' }))).toBe(true);
    expect(approvalCovers(rule, call({ path: 'a/b/c.txt' }))).toBe(true);
    expect(approvalCovers(rule, call({ path: '/a/bc' }))).toBe(false);
    expect(approvalCovers(rule, call({ path: '/a/bc/x' }))).toBe(false);
    expect(approvalCovers(rule, call({ path: '/a/b/../secret' }))).toBe(false);
    expect(approvalCovers(rule, call({ path: '/a/b/../../etc/passwd' }))).toBe(false);
    expect(approvalCovers(rule, call({ path: 'a/b/../../../a/bc' }))).toBe(false);
    expect(approvalCovers(rule, call({ path: '/a/b/./c/../d' }))).toBe(true);
    expect(approvalCovers(rule, call({ path: '/a/b/c\u0000/../../x' }))).toBe(false);
  });

  it('a prefix written with dots or a trailing slash is normalised before it is kept', () => {
    expect(ruleFor({ path_prefix: 'src/' }).path_prefix).toBe('/src');
    expect(ruleFor({ path_prefix: '/src/../etc/' }).path_prefix).toBe('/etc');
    expect(ruleFor({ path_prefix: '../../..' }).path_prefix).toBe('/');
  });

  it('every path argument must be inside; a call without one, or with a non-string, is not covered', () => {
    const rule = ruleFor({ path_prefix: '/work' });
    expect(approvalCovers(rule, call({ source_path: '/work/a', destination_path: '/work/b' }))).toBe(true);
    expect(approvalCovers(rule, call({ source_path: '/work/a', destination_path: '/elsewhere' }))).toBe(
      false,
    );
    expect(approvalCovers(rule, call({ content: 'x' }))).toBe(false);
    expect(approvalCovers(rule, call({ path: ['/work/a', '/elsewhere'] }))).toBe(false);
    expect(approvalCovers(rule, call({ path: [] }))).toBe(false);
    expect(approvalCovers(rule, call({ paths: ['/work/a', '/work/../x'] }))).toBe(false);
    expect(approvalCovers(rule, call({ path: 42 }))).toBe(false);
    expect(approvalCovers(rule, { name: 'write_file', arguments: 'not json' })).toBe(false);
  });

  it('an arguments rule covers exactly the canonical arguments (key order aside)', () => {
    const rule = ruleFor('arguments', { path: 'a.txt', content: { x: 1, y: [1, 2] } });
    expect(approvalCovers(rule, call({ content: { y: [1, 2], x: 1 }, path: 'a.txt' }))).toBe(true);
    expect(approvalCovers(rule, call({ path: 'a.txt', content: { x: 1, y: [2, 1] } }))).toBe(false);
    expect(approvalCovers(rule, call({ path: 'a.txt', content: { x: 1, y: [1, 2] }, extra: null }))).toBe(
      false,
    );
    expect(approvalCovers(rule, call({ path: 'a.txt', content: { x: '1', y: [1, 2] } }))).toBe(false);
    expect(canonicalJson({ b: 1, a: { d: 1, c: 2 } })).toBe('{"a":{"c":2,"d":1},"b":1}');
  });

  it('a rule covers its own tool only', () => {
    expect(approvalCovers(ruleFor('tool'), call({ path: 'x' }, 'run_command'))).toBe(false);
    expect(approvalCovers(ruleFor('tool'), call({ path: 'x' }))).toBe(true);
    expect(matchingApproval([ruleFor('tool', {}, 'read_file')], call({ path: 'x' }))).toBeUndefined();
  });

  it('the same rule remembered twice has the same key; another rule another', () => {
    expect(ruleFor('tool').key).toBe(ruleFor('tool').key);
    expect(ruleFor({ path_prefix: '/a/b/' }).key).toBe(ruleFor({ path_prefix: '/a/b' }).key);
    expect(ruleFor({ path_prefix: '/a/b' }).key).not.toBe(ruleFor({ path_prefix: '/a/bc' }).key);
    expect(ruleFor('tool').key).not.toBe(ruleFor('arguments').key);
  });
});

describe('remembered approvals: the answer', () => {
  it('refuses a remember value it does not know, and a prefix over the bound, naming the field', () => {
    const bad = approvalAnswerSchema.safeParse({ decision: 'approve', remember: 'forever' });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain('remember');
    const long = approvalAnswerSchema.safeParse({
      decision: 'approve',
      remember: { path_prefix: `/${'a'.repeat(maxPathPrefixLength)}` },
    });
    expect(long.error?.issues[0]?.message).toMatch(/remember.path_prefix is over 1000 characters/);
    const empty = approvalAnswerSchema.safeParse({ decision: 'approve', remember: { path_prefix: '' } });
    expect(empty.error?.issues[0]?.message).toMatch(/remember.path_prefix is empty/);
  });

  it("takes remember only with an approval of the model's own arguments", () => {
    const question = { id: 'q-1', kind: 'approval' } as QuestionRecord;
    expect(normalizeResponse(question, { decision: 'approve', remember: 'tool' }, undefined)).toEqual({
      decision: 'approve',
      remember: 'tool',
    });
    expect(() => normalizeResponse(question, { decision: 'reject', remember: 'tool' }, undefined)).toThrow(
      /remember goes with decision "approve"/,
    );
  });
});
