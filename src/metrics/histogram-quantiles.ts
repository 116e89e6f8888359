// Quantiles of a prom-client histogram read from its buckets, as Prometheus's histogram_quantile() computes
// them: the bucket the rank falls in, and a straight line between its bounds (the first bucket's lower bound is
// 0; a rank past the last finite bound is that bound). Approximate by the buckets' width, as any dashboard's.
import type { Histogram } from 'prom-client';

/** Cumulative counts by upper bound, ascending (+Inf last). */
export type Buckets = { le: number; count: number }[];

export function quantileOf(buckets: Buckets, q: number): number | null {
  const total = buckets[buckets.length - 1]?.count ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const b of buckets) {
    if (b.count >= rank) {
      if (b.le === Infinity) return lower;
      const inBucket = b.count - below;
      return inBucket === 0 ? b.le : lower + (b.le - lower) * ((rank - below) / inBucket);
    }
    lower = b.le;
    below = b.count;
  }
  return lower;
}

/** The histogram's buckets now (of its unlabelled series). */
export async function bucketsOf(histogram: Histogram<string>): Promise<Buckets> {
  const { values } = await histogram.get();
  return values
    .filter((v) => v.metricName?.endsWith('_bucket'))
    .map((v) => ({ le: v.labels.le === '+Inf' ? Infinity : Number(v.labels.le), count: v.value }))
    .sort((a, b) => a.le - b.le);
}
