import './register-fake-provider.js';
import '../../src/models/index.js';
import { describe, expect, it } from 'vitest';
import { configParser } from './config-parser.js';

// A provider's max_reply_chars has a stated range, checked at load with the field's path and the limit.
const { parse, problemsOf } = configParser();
const configWith = (limit: string) =>
  `providers: [{ name: main, kind: fake, model: m${limit} }]\nagents: [{ name: writer, provider: main }]`;

describe('providers[].max_reply_chars', () => {
  it('is absent unless set (the default, 1,000,000, applies), and taken within its range', () => {
    expect(parse(configWith('')).providers[0]).not.toHaveProperty('max_reply_chars');
    expect(parse(configWith(', max_reply_chars: 16000000')).providers[0]?.max_reply_chars).toBe(16_000_000);
  });

  it.each([
    ['999', 'at least 1000'],
    ['16000001', 'at most 16000000'],
    ['1e12', 'at most 16000000'],
    ['2500.5', 'int'],
  ])('refuses %s, naming the field and the limit', (value, limit) => {
    const problems = problemsOf(configWith(`, max_reply_chars: ${value}`));
    expect(problems.join('\n')).toMatch(/providers\[0\]\.max_reply_chars/);
    expect(problems.join('\n')).toContain(limit);
  });
});
