import { CST, Lexer } from 'yaml';

export interface ExpandedText {
  text: string;
  /** `line N: message`, one per bad reference; when there are any, `text` is not meant to be used. */
  problems: string[];
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
  const problems: string[] = [];
  const expanded = text.replace(
    referencePattern,
    (match: string, braced: string | undefined, bare: string | undefined, offset: number) => {
      if (comments.some(([start, end]) => offset >= start && offset < end)) return match;
      if (match === '$$') return '$';
      const line = lineOf(text, offset);
      if (bare !== undefined) return lookupVariable(bare, undefined, env, line, problems);
      if (braced === undefined) {
        problems.push(`line ${line}: "\${" is not closed by "}" on the same line (write $$ for a literal $)`);
        return match;
      }
      const parts = bracedPattern.exec(braced);
      if (!parts?.[1]) {
        problems.push(
          `line ${line}: invalid variable reference "${match}" (expected \${NAME} or \${NAME:-default}; ` +
            'write $$ for a literal $)',
        );
        return match;
      }
      return lookupVariable(parts[1], parts[2], env, line, problems);
    },
  );
  return { text: expanded, problems };
}

function lookupVariable(
  name: string,
  fallback: string | undefined,
  env: NodeJS.ProcessEnv,
  line: number,
  problems: string[],
): string {
  const value = env[name];
  if (fallback !== undefined) return value === undefined || value === '' ? fallback : value;
  if (value !== undefined) return value;
  problems.push(
    `line ${line}: environment variable ${name} is not set (set it, or write \${${name}:-default})`,
  );
  return '';
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
