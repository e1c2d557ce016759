/**
 * Compiles a glob to a RegExp matched against a whole `/`-separated relative path:
 * `*` any characters but `/`, `**` as a whole segment any number of segments (`src/**` + `/*.ts`), `?` one
 * character but `/`, `{a,b}` alternatives (nestable), `[abc]` / `[!abc]` a character class, `\x` a literal
 * `x`. Dot files match like any other. Throws an error naming the problem for unbalanced braces.
 */
export function globToRegExp(pattern: string): RegExp {
  if (pattern === '') throw new Error('pattern: is empty; e.g. "**/*.ts"');
  let source = '';
  let braceDepth = 0;
  let index = 0;
  while (index < pattern.length) {
    const char = pattern[index] as string;
    if (char === '*') {
      let end = index;
      while (pattern[end] === '*') end += 1;
      const wholeSegment = (index === 0 || pattern[index - 1] === '/') && end - index >= 2;
      if (wholeSegment && pattern[end] === '/') {
        source += '(?:[^/]*/)*';
        index = end + 1;
      } else if (wholeSegment && end === pattern.length) {
        source += '.*';
        index = end;
      } else {
        source += '[^/]*';
        index = end;
      }
      continue;
    }
    if (char === '[') {
      const close = pattern.indexOf(']', index + 2);
      if (close !== -1) {
        source += characterClass(pattern.slice(index + 1, close));
        index = close + 1;
        continue;
      }
    }
    if (char === '\\' && index + 1 < pattern.length) {
      source += escapeRegExp(pattern[index + 1] as string);
      index += 2;
      continue;
    }
    if (char === '{') {
      braceDepth += 1;
      source += '(?:';
    } else if (char === '}' && braceDepth > 0) {
      braceDepth -= 1;
      source += ')';
    } else if (char === ',' && braceDepth > 0) {
      source += '|';
    } else if (char === '?') {
      source += '[^/]';
    } else {
      source += escapeRegExp(char);
    }
    index += 1;
  }
  if (braceDepth > 0) throw new Error(`pattern: "${pattern}" has a "{" without its "}"`);
  return new RegExp(`^${source}$`);
}

function characterClass(body: string): string {
  const negated = body.startsWith('!') || body.startsWith('^');
  const members = (negated ? body.slice(1) : body).replace(/[\\\]]/g, '\\$&');
  return negated ? `[^/${members}]` : `[${members}]`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
