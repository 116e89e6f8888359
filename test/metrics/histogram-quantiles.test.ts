// Quantiles read from a histogram's buckets as Prometheus's histogram_quantile() reads them: interpolated
// inside the bucket the rank falls in, from 0 below the first bound, capped at the last finite bound, none
// before the first observation; and the buckets of a real prom-client histogram.
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { bucketsOf, quantileOf } from '../../src/metrics/histogram-quantiles.ts';

const buckets = (counts: [number, number][]) => counts.map(([le, count]) => ({ le, count }));

describe('quantileOf', () => {
  it('interpolates inside the bucket the rank falls in', () => {
    const b = buckets([
      [0.01, 50],
      [0.1, 90],
      [1, 100],
      [Infinity, 100],
    ]);
    expect(quantileOf(b, 0.5)).toBeCloseTo(0.01);
    expect(quantileOf(b, 0.25)).toBeCloseTo(0.005);
    expect(quantileOf(b, 0.7)).toBeCloseTo(0.01 + 0.09 * (20 / 40));
    expect(quantileOf(b, 0.99)).toBeCloseTo(0.1 + 0.9 * (9 / 10));
  });

  it('caps a rank past the last finite bound at that bound, and has none before the first observation', () => {
    expect(
      quantileOf(
        buckets([
          [0.5, 1],
          [1, 1],
          [Infinity, 3],
        ]),
        0.99,
      ),
    ).toBe(1);
    expect(
      quantileOf(
        buckets([
          [0.5, 0],
          [Infinity, 0],
        ]),
        0.5,
      ),
    ).toBeNull();
    expect(quantileOf([], 0.5)).toBeNull();
  });
});

describe('bucketsOf', () => {
  it("reads a prom-client histogram's cumulative buckets, +Inf last", async () => {
    const h = new Histogram({ name: 'h_seconds', help: 'h', buckets: [0.1, 1], registers: [new Registry()] });
    h.observe(0.05);
    h.observe(0.5);
    h.observe(5);
    expect(await bucketsOf(h)).toEqual(
      buckets([
        [0.1, 1],
        [1, 2],
        [Infinity, 3],
      ]),
    );
  });
});
