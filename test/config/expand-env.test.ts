// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text with ${VAR} references.
import { describe, expect, it } from 'vitest';
import { expandEnv } from '../../src/config/expand-env.js';

const env = { NAME: 'value', EMPTY: '' };

describe('expandEnv', () => {
  it('expands ${NAME} and $NAME', () => {
    expect(expandEnv('a: ${NAME}\nb: $NAME/x\nc: pre${NAME}post\n', env)).toEqual({
      text: 'a: value\nb: value/x\nc: prevaluepost\n',
      problems: [],
    });
  });

  it('uses ${NAME:-default} when the variable is unset or empty, and the value otherwise', () => {
    const { text } = expandEnv('a: ${MISSING:-fallback}\nb: ${EMPTY:-fallback}\nc: ${NAME:-fallback}\n', env);
    expect(text).toBe('a: fallback\nb: fallback\nc: value\n');
  });

  it('takes defaults literally, including an empty one', () => {
    expect(expandEnv('a: "${MISSING:-}"\nb: ${MISSING:-x:-$y}\n', env).text).toBe('a: ""\nb: x:-$y\n');
  });

  it('expands a set but empty variable without a default to the empty string', () => {
    expect(expandEnv('a: "${EMPTY}"\n', env)).toEqual({ text: 'a: ""\n', problems: [] });
  });

  it('turns $$ into a literal $, which is never expanded further', () => {
    expect(expandEnv('a: $$NAME costs $$5 and $${NAME}\n', env).text).toBe('a: $NAME costs $5 and ${NAME}\n');
  });

  it('keeps a $ that starts no reference', () => {
    expect(expandEnv('a: costs $5, 100$ or $-\n', env).text).toBe('a: costs $5, 100$ or $-\n');
  });

  it('reports an unset variable with its line and how to fix it', () => {
    const result = expandEnv('providers:\n  - name: default\n    api_key: ${OPENAI_API_KEY}\n', env);
    expect(result.problems).toEqual([
      {
        line: 3,
        expandedOffset: 42,
        message:
          'environment variable OPENAI_API_KEY is not set (set it, or write ${OPENAI_API_KEY:-default})',
      },
    ]);
    // Replaced by nothing, so the rest of the text can still be parsed and checked.
    expect(result.text).toBe('providers:\n  - name: default\n    api_key: \n');
  });

  it('reports every unset variable at once, bare ones included', () => {
    expect(expandEnv('a: ${ONE}\nb: $TWO\n', env).problems).toEqual([
      {
        line: 1,
        expandedOffset: 3,
        message: 'environment variable ONE is not set (set it, or write ${ONE:-default})',
      },
      {
        line: 2,
        expandedOffset: 7,
        message: 'environment variable TWO is not set (set it, or write ${TWO:-default})',
      },
    ]);
  });

  it('reports malformed references', () => {
    expect(expandEnv('a: ${1X}\nb: ${NAME\n', env).problems).toEqual([
      {
        line: 1,
        expandedOffset: 3,
        message:
          'invalid variable reference "${1X}" (expected ${NAME} or ${NAME:-default}; write $$ for a literal $)',
      },
      {
        line: 2,
        expandedOffset: 7,
        message: '"${" is not closed by "}" on the same line (write $$ for a literal $)',
      },
    ]);
  });

  it('places each bad reference in the expanded text, after what the references before it became', () => {
    const { text, problems } = expandEnv('a: ${NAME} $$ ${UNSET} ${NAME:-x}\n', env);
    expect(text).toBe('a: value $  value\n');
    expect(problems.map((problem) => problem.expandedOffset)).toEqual([11]);
    expect(text.slice(0, 11)).toBe('a: value $ ');
  });

  it('leaves comments alone, whole-line and trailing', () => {
    const text = '# uses ${UNSET}\na: ${NAME} # or $UNSET\n  # ${ALSO_UNSET:-x}\n';
    expect(expandEnv(text, env)).toEqual({
      text: '# uses ${UNSET}\na: value # or $UNSET\n  # ${ALSO_UNSET:-x}\n',
      problems: [],
    });
  });

  it('expands a # that does not start a comment: in quotes, inside a word, in a block scalar', () => {
    const text = 'a: "x # $NAME"\nb: \'# $NAME\'\nc: x#$NAME\nd: |\n  # $NAME\n';
    expect(expandEnv(text, env).text).toBe('a: "x # value"\nb: \'# value\'\nc: x#value\nd: |\n  # value\n');
  });

  it('keeps references in flow collections working', () => {
    expect(expandEnv('a: [${NAME}, {b: ${NAME}}] # $UNSET\n', env)).toEqual({
      text: 'a: [value, {b: value}] # $UNSET\n',
      problems: [],
    });
  });
});
