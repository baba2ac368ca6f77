/**
 * "Did you mean" for a misspelt name (a config key, a plugin id): the known name nearest to
 * it, only when near enough that the suggestion is likely what was meant. A suggestion that
 * is far off sends a reader after the wrong key, which is worse than none.
 */

/**
 * The candidate nearest to `word` (case ignored), or undefined when none is near: an edit
 * distance of at most a third of the longer name (at least 1), so that `sesion` finds
 * `session` and `timeout` finds `timeoutMs`, while `port` does not find `host`.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const limit = Math.max(1, Math.floor(Math.max(word.length, candidate.length) / 3));
    const distance = editDistance(lower, candidate.toLowerCase(), limit);
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Optimal-string-alignment distance (Levenshtein with adjacent transpositions counted as
 * one edit, the commonest typo). Stops early once every path costs more than `limit`.
 */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      current[j] = value;
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}
