/**
 * The candidate closest to `name`, for "did you mean" hints: compared case-insensitively, and only when
 * it is within a small edit distance (1 for short names, 2 from six characters on) so unrelated names are
 * never suggested.
 */
export function suggest(name: string, candidates: readonly string[]): string | undefined {
  const target = name.toLowerCase();
  const limit = Math.min(2, Math.max(1, Math.floor(name.length / 3)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    const distance = editDistance(target, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** ` (did you mean "x"?)` when a candidate is close, else ''. */
export function didYouMean(name: string, candidates: readonly string[]): string {
  const suggestion = suggest(name, candidates);
  return suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`;
}

/** Levenshtein distance: insertions, deletions and substitutions each cost 1. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
