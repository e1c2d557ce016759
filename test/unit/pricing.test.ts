import { describe, expect, it } from 'vitest';
import { costOf } from '../../src/models/pricing.js';

const usage = { input_tokens: 1_000_000, output_tokens: 200_000, cached_input_tokens: 400_000, requests: 1 };

describe('costOf', () => {
  it('prices uncached input, cached input and output separately (USD per million tokens)', () => {
    // 600k uncached × $3 + 400k cached × $0.30 + 200k output × $15
    expect(costOf(usage, { input: 3, output: 15, cached_input: 0.3 })).toBeCloseTo(1.8 + 0.12 + 3, 10);
  });

  it('charges cached input at the input price when no cached price is given, and 0 without a price', () => {
    expect(costOf(usage, { input: 1, output: 2 })).toBeCloseTo(1 + 0.4, 10);
    expect(costOf(usage, undefined)).toBe(0);
  });
});
