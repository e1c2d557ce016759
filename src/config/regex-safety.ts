import { setFlagsFromString } from 'node:v8';

/**
 * Patterns from the config that run over model output (output guardrails) run on V8's linear-time regexp
 * engine (the `l` flag): no answer can make them backtrack, whatever the pattern. The engine is behind a V8
 * flag, set here once; it changes nothing for expressions without the `l` flag. Should a runtime not have
 * it, patterns run on the backtracking engine, where the checks below and the length limit of the guardrail
 * check are the only bounds.
 */
let linearEngine: boolean | undefined;
// A variable: TypeScript does not know the flag, which only exists behind the V8 flag.
const linearFlag: string = 'l';

export function hasLinearRegExpEngine(): boolean {
  if (linearEngine === undefined) {
    try {
      setFlagsFromString('--enable-experimental-regexp-engine');
      new RegExp('a', linearFlag);
      linearEngine = true;
    } catch {
      linearEngine = false;
    }
  }
  return linearEngine;
}

/** A config pattern (already accepted by patternProblem) compiled for matching model output. */
export function compileSafePattern(source: string): RegExp {
  return new RegExp(source, hasLinearRegExpEngine() ? linearFlag : '');
}

/**
 * Why a pattern from the config is not accepted for matching model output, or undefined.
 *
 * Refused are what the linear-time engine cannot run (lookarounds, backreferences; Unicode property escapes
 * need the `u` flag, which it does not take), so that a pattern is valid or not the same way on every
 * runtime, and a quantified group that itself contains a quantifier (`(a+)+`, `(\w*\s?)*`, `(?:x{2,})+`),
 * the shape behind exponential backtracking, for runtimes without that engine. The check is syntactic and
 * cheap; it does not see overlapping alternatives (`(a|a)*`) or adjacent quantifiers (`a*a*b`), which only
 * the linear engine (or, without it, the length limit) bounds.
 */
export function unsafePatternReason(source: string): string | undefined {
  // For each open group: whether a quantifier occurred inside it.
  const groups: boolean[] = [];
  let lastClosedGroupHadQuantifier = false;
  let inClass = false;
  for (let index = 0; index < source.length; index++) {
    const char = source[index];
    if (char === '\\') {
      const next = source[index + 1] ?? '';
      if (!inClass && /[1-9]/.test(next)) return 'backreferences are not allowed';
      if (!inClass && next === 'k' && source[index + 2] === '<') return 'backreferences are not allowed';
      if (next === 'p' || next === 'P') return 'Unicode property escapes (\\p{...}) are not supported';
      index += 1;
      lastClosedGroupHadQuantifier = false;
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      continue;
    }
    if (char === '[') {
      inClass = true;
      lastClosedGroupHadQuantifier = false;
      continue;
    }
    if (char === '(') {
      if (/^\(\?<?[=!]/.test(source.slice(index, index + 4))) return 'lookarounds are not allowed';
      groups.push(false);
      lastClosedGroupHadQuantifier = false;
      continue;
    }
    if (char === ')') {
      const hadQuantifier = groups.pop() ?? false;
      lastClosedGroupHadQuantifier = hadQuantifier;
      // A group inside another carries its quantifiers outwards.
      if (hadQuantifier && groups.length > 0) groups[groups.length - 1] = true;
      continue;
    }
    const quantifierLength = repeatingQuantifierAt(source, index);
    if (quantifierLength > 0) {
      if (lastClosedGroupHadQuantifier) {
        return 'a repeated group contains a repetition itself (nested quantifiers backtrack exponentially)';
      }
      if (groups.length > 0) groups[groups.length - 1] = true;
      index += quantifierLength - 1;
      lastClosedGroupHadQuantifier = false;
      continue;
    }
    // `?` alone (optional, or lazy/possessive markers after a quantifier) repeats nothing.
    if (char !== '?') lastClosedGroupHadQuantifier = false;
  }
  return undefined;
}

/**
 * The length of a quantifier with a choice of how often to repeat (`*`, `+`, `{n,}`, `{n,m}` with m > n) at
 * `index`, else 0: a fixed count (`{3}`) leaves a matcher nothing to backtrack over.
 */
function repeatingQuantifierAt(source: string, index: number): number {
  const char = source[index];
  if (char === '*' || char === '+') return 1;
  if (char !== '{') return 0;
  const match = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(index, index + 24));
  if (!match) return 0;
  const lower = Number(match[1]);
  const upper =
    match[2] === undefined ? lower : match[3] === '' ? Number.POSITIVE_INFINITY : Number(match[3]);
  return upper > lower ? match[0].length : 0;
}

/** Flags a JavaScript regex literal may end with. */
const literalFlags = /^[dgimsuvy]*$/;

/**
 * Why a pattern written as a JavaScript regex literal (`/password/i`) is refused, or undefined. It would
 * compile, but as a pattern that looks for the slashes and the flag letters themselves, so it would silently
 * never match. Config patterns have no flags field (the linear-time engine takes no `i`): the fix is the
 * pattern without slashes, with both cases spelled out for `i`. Slashes meant literally are escaped (`\/`).
 */
export function regexLiteralProblem(source: string): string | undefined {
  const close = source.lastIndexOf('/');
  if (!source.startsWith('/') || close < 2) return undefined;
  const body = source.slice(1, close);
  const flags = source.slice(close + 1);
  if (!literalFlags.test(flags) || new Set(flags).size !== flags.length) return undefined;
  const advice = [`write the pattern without the slashes: "${body}"`];
  if (flags.includes('i')) {
    advice.push(
      `patterns take no flags (there is no flags field): for a case-insensitive match spell both cases, "${bothCases(body)}"`,
    );
  } else if (flags !== '') {
    advice.push(`patterns take no flags (there is no flags field): drop "${flags}"`);
  }
  return (
    `looks like a /pattern/${flags} literal, which would match the slashes${flags === '' ? '' : ' and flag letters'} ` +
    `themselves: ${advice.join('; ')} (to match slashes, escape them: "\\/")`
  );
}

/** The pattern with each letter outside escapes and classes matching both cases (`ab` → `[Aa][Bb]`). */
function bothCases(source: string): string {
  let result = '';
  let inClass = false;
  for (let index = 0; index < source.length; index++) {
    const char = source[index] as string;
    if (char === '\\') {
      result += source.slice(index, index + 2);
      index += 1;
      continue;
    }
    if (char === '[') inClass = true;
    else if (char === ']') inClass = false;
    const upper = char.toUpperCase();
    const lower = char.toLowerCase();
    result += !inClass && upper !== lower ? `[${upper}${lower}]` : char;
  }
  return result;
}

/** Why a pattern cannot be used: it does not compile, or it is refused above; undefined when it is fine. */
export function patternProblem(source: string): string | undefined {
  const literal = regexLiteralProblem(source);
  if (literal !== undefined) return literal;
  try {
    new RegExp(source);
  } catch (error) {
    return `not a valid regular expression: ${(error as Error).message}`;
  }
  const unsafe = unsafePatternReason(source);
  if (unsafe !== undefined) return `unsafe regular expression: ${unsafe}`;
  try {
    compileSafePattern(source);
  } catch (error) {
    return `cannot be matched in linear time: ${(error as Error).message}`;
  }
  return undefined;
}
