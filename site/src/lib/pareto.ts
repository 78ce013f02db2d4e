/**
 * The items no other item beats on both measures (at least as high on each, higher on one), in ascending `x`: the
 * Pareto front where more of each is better. A measure where less is better goes in negated. Items whose measures
 * are not finite numbers are left out; of two with equal measures the first is kept.
 */
export function paretoFront<T>(items: readonly T[], x: (item: T) => number, y: (item: T) => number): T[] {
  const scored = items.map((item) => ({ item, x: x(item), y: y(item) })).filter((s) => Number.isFinite(s.x) && Number.isFinite(s.y));
  // Highest x first (the highest y among equal x first): each next item is on the front only if it beats every y so far.
  const byX = scored.map((s, i) => ({ ...s, i })).sort((a, b) => b.x - a.x || b.y - a.y || a.i - b.i);
  const front: typeof byX = [];
  let best = -Infinity;
  for (const s of byX) {
    if (s.y > best) {
      front.push(s);
      best = s.y;
    }
  }
  return front.sort((a, b) => a.x - b.x).map((s) => s.item);
}
