import { CST, Lexer } from 'yaml';

/** A bad reference: an unset variable, or one written wrongly. */
export interface ExpansionProblem {
  /** The line of the reference in the text, from 1. */
  line: number;
  /** Where the reference is in the expanded text (it was replaced by nothing). */
  expandedOffset: number;
  message: string;
}

export interface ExpandedText {
  /**
   * The expanded text. A bad reference is replaced by nothing (so the rest can still be parsed and checked,
   * and every problem reported at once); a problem at its line then follows from it.
   */
  text: string;
  /** One per bad reference, in the order of the text. */
  problems: ExpansionProblem[];
}

/** `$$`, `${...}` (closed on the same line), `$NAME`, or a `${` that is never closed. */
const referencePattern = /\$(?:\$|\{([^}\n]*)\}|([A-Za-z_][A-Za-z0-9_]*)|\{)/g;
const bracedPattern = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/**
 * Expands environment variables in a config file's raw text, before YAML parsing:
 * `${NAME}` and `$NAME` (an error when NAME is unset), `${NAME:-default}` (the default, taken literally,
 * when NAME is unset or empty) and `$$` for a literal `$`. A `$` followed by anything else is kept as is.
 *
 * References inside YAML comments are left alone, so a commented-out line cannot fail the load. Comments
 * are found by YAML's own lexer on the unexpanded text: a `#` at the start of a line or after whitespace,
 * outside quoted and block scalars. Values are substituted verbatim, so a value containing YAML syntax
 * (`: `, ` #`, a leading `*` or quotes) should be written inside a quoted scalar or a block scalar.
 */
export function expandEnv(text: string, env: NodeJS.ProcessEnv): ExpandedText {
  const comments = commentRanges(text);
  const problems: ExpansionProblem[] = [];
  // How much longer the expanded text is than the original, before the reference being replaced.
  let shift = 0;
  const expanded = text.replace(
    referencePattern,
    (match: string, braced: string | undefined, bare: string | undefined, offset: number) => {
      if (comments.some(([start, end]) => offset >= start && offset < end)) return match;
      const bad = (message: string) => {
        problems.push({ line: lineOf(text, offset), expandedOffset: offset + shift, message });
        return '';
      };
      const result = expandReference(match, braced, bare, env, bad);
      shift += result.length - match.length;
      return result;
    },
  );
  return { text: expanded, problems };
}

/** What one reference becomes; a bad one is reported through `bad`, which gives what replaces it. */
function expandReference(
  match: string,
  braced: string | undefined,
  bare: string | undefined,
  env: NodeJS.ProcessEnv,
  bad: (message: string) => string,
): string {
  if (match === '$$') return '$';
  if (bare !== undefined) return lookupVariable(bare, undefined, env, bad);
  if (braced === undefined)
    return bad(`"\${" is not closed by "}" on the same line (write $$ for a literal $)`);
  const parts = bracedPattern.exec(braced);
  if (!parts?.[1]) {
    return bad(
      `invalid variable reference "${match}" (expected \${NAME} or \${NAME:-default}; write $$ for a literal $)`,
    );
  }
  return lookupVariable(parts[1], parts[2], env, bad);
}

function lookupVariable(
  name: string,
  fallback: string | undefined,
  env: NodeJS.ProcessEnv,
  bad: (message: string) => string,
): string {
  const value = env[name];
  if (fallback !== undefined) return value === undefined || value === '' ? fallback : value;
  if (value !== undefined) return value;
  return bad(`environment variable ${name} is not set (set it, or write \${${name}:-default})`);
}

/** [start, end) offsets of every comment, from the lexer's tokens (its control tokens take no space). */
function commentRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === CST.DOCUMENT || token === CST.FLOW_END || token === CST.SCALAR) continue;
    if (CST.tokenType(token) === 'comment') ranges.push([offset, offset + token.length]);
    offset += token.length;
  }
  return ranges;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (
    let index = text.indexOf('\n');
    index !== -1 && index < offset;
    index = text.indexOf('\n', index + 1)
  ) {
    line++;
  }
  return line;
}
