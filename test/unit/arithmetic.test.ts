import { describe, expect, it } from 'vitest';
import { evaluateArithmetic } from '../../src/tools/builtin/utils/arithmetic.js';
import { utilsToolbox } from '../../src/tools/builtin/utils/utils-toolbox.js';
import { findTool, prepareToolCall } from '../../src/tools/index.js';

describe('evaluateArithmetic', () => {
  it.each([
    ['1 + 2', 3],
    ['2 + 3 * 4', 14],
    ['(2 + 3) * 4', 20],
    ['10 - 4 - 3', 3],
    ['100 / 10 / 5', 2],
    ['7 % 4 * 2', 6],
    ['2 * 3 ^ 2', 18],
    ['2 ^ 3 ^ 2', 512],
    ['(2 ^ 3) ^ 2', 64],
    ['2 ^ -1', 0.5],
    // Unary minus binds looser than ^, as in mathematics: -2^2 is -(2^2).
    ['-2 ^ 2', -4],
    ['(-2) ^ 2', 4],
    ['2 ^ -2 ^ 2', 0.0625],
    ['-(1 + 1) ^ 2', -4],
    ['--2', 2],
    ['-3 + 5', 2],
    ['4 - -2', 6],
    ['-(2 + 3) * 2', -10],
    ['+4', 4],
    ['((1))', 1],
    ['1.5 * 2', 3],
    ['1e3 + 1', 1001],
    ['2.5E-1', 0.25],
    ['  7  ', 7],
  ])('%s = %d', (expression, expected) => {
    expect(evaluateArithmetic(expression)).toBe(expected);
  });

  it.each([
    ['', 'unexpected end of expression'],
    ['1 +', 'unexpected end of expression'],
    ['(1 + 2', 'missing ")"'],
    ['1 + 2)', 'unexpected ")"'],
    ['2 3', 'unexpected "3"'],
    ['abc', 'unexpected "a"'],
    ['2 * x', 'unexpected "x"'],
    ['1; process.exit()', 'unexpected ";"'],
    ['1 / 0', 'the result is not a finite number'],
    ['0 / 0', 'the result is not a finite number'],
    ['5 % 0', 'the result is not a finite number'],
    ['10 ^ 400', 'the result is not a finite number'],
  ])('%j fails with %s', (expression, message) => {
    expect(() => evaluateArithmetic(expression)).toThrow(`${message} in "${expression}"`);
  });
});

describe('the calculate tool', () => {
  it('validates its input and returns the result as JSON', async () => {
    const calculate = findTool([utilsToolbox()], 'calculate');
    expect(calculate).toBeDefined();
    if (!calculate) return;
    const empty = prepareToolCall({ name: 'calculate', arguments: '{"expression":""}' }, calculate, [
      'calculate',
    ]);
    expect(empty.ok).toBe(false);
    const prepared = prepareToolCall({ name: 'calculate', arguments: '{"expression":"6*7"}' }, calculate, [
      'calculate',
    ]);
    expect(prepared.ok).toBe(true);
    if (!prepared.ok) return;
    const output = await calculate.handler({} as never, prepared.input);
    expect(output).toEqual({ expression: '6*7', result: 42 });
  });
});
