/**
 * A small arithmetic evaluator (numbers, + - * / % ^, parentheses, unary minus) for the `calculate` tool.
 * No eval: the model's text is parsed, never executed.
 */
export function evaluateArithmetic(expression: string): number {
  const tokens = expression.match(/\d+(?:\.\d+)?(?:e[+-]?\d+)?|[-+*/%^()]|\S/gi) ?? [];
  let position = 0;
  const peek = () => tokens[position];
  const take = () => {
    const token = tokens[position];
    position += 1;
    return token;
  };
  const fail = (message: string): never => {
    throw new Error(`${message} in "${expression}"`);
  };

  function primary(): number {
    const token = take();
    if (token === undefined) return fail('unexpected end of expression');
    if (token === '(') {
      const value = sum();
      if (take() !== ')') fail('missing ")"');
      return value;
    }
    if (token === '-') return -power();
    if (token === '+') return primary();
    const value = Number(token);
    if (Number.isNaN(value)) fail(`unexpected "${token}"`);
    return value;
  }
  function power(): number {
    const base = primary();
    if (peek() === '^') {
      take();
      return base ** power();
    }
    return base;
  }
  function product(): number {
    let value = power();
    for (let operator = peek(); operator === '*' || operator === '/' || operator === '%'; operator = peek()) {
      take();
      const right = power();
      if (operator === '*') value *= right;
      else if (operator === '/') value /= right;
      else value %= right;
    }
    return value;
  }
  function sum(): number {
    let value = product();
    for (let operator = peek(); operator === '+' || operator === '-'; operator = peek()) {
      take();
      const right = product();
      value = operator === '+' ? value + right : value - right;
    }
    return value;
  }

  const value = sum();
  if (position < tokens.length) fail(`unexpected "${tokens[position]}"`);
  if (!Number.isFinite(value)) fail('the result is not a finite number');
  return value;
}
