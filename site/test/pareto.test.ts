import { describe, expect, it } from 'vitest';
import { paretoFront } from '../src/lib/pareto.js';

interface P {
  name: string;
  x: number;
  y: number;
}
const p = (name: string, x: number, y: number): P => ({ name, x, y });
const names = (points: P[]): string[] => points.map((q) => q.name);
const front = (points: P[]): string[] => names(paretoFront(points, (q) => q.x, (q) => q.y));

describe('paretoFront (more of both is better)', () => {
  it('keeps the points no other beats on both, in ascending x', () => {
    // A serving sweep: per-user tokens/s falls as system tokens/s rises; c is beaten by d on both.
    expect(front([p('a', 100, 50), p('b', 80, 200), p('c', 40, 250), p('d', 50, 300), p('e', 10, 280)])).toEqual(['d', 'b', 'a']);
  });

  it('drops a point equalled on one measure and beaten on the other, and the second of two equal points', () => {
    expect(front([p('a', 10, 5), p('b', 10, 7), p('c', 3, 7), p('d', 10, 7)])).toEqual(['b']);
  });

  it('takes a measure where less is better negated, and leaves out what is not a finite number', () => {
    const energy = [p('a', 100, 2), p('b', 200, 1), p('c', 150, 3), p('d', 300, 1.5), p('e', 400, NaN), p('f', Infinity, 1)];
    expect(names(paretoFront(energy, (q) => q.x, (q) => -q.y))).toEqual(['b', 'd']);
  });

  it('is empty for no points and the point itself for one', () => {
    expect(front([])).toEqual([]);
    expect(front([p('a', 1, 1)])).toEqual(['a']);
  });
});
