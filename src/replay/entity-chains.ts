// Which samples must be replayed one after another: those that touch the same entity, keyed as the adapter's
// processor keys it (the appointment, the patient, the document). An entity's events are meant in file order,
// and one sent before the previous was acknowledged may overtake it and be discarded as stale.
import { parseStoredEvent } from '../contract/stored-event.ts';
import type { Sample } from './samples.ts';

/** The entity keys a sample's deliveries (or its document request) touch; none for a body no entity can be read from. */
export function entityKeysOf(sample: Sample): string[] {
  if (sample.document) return [`document:${String(sample.document.request.externalId)}`];
  return sample.steps.flatMap((step) => {
    const bytes = Buffer.from(step.rawBody ?? JSON.stringify(step.body));
    const parsed = parseStoredEvent(bytes, String(step.body?.eventId ?? step.eventId ?? ''));
    return parsed.ok ? [parsed.entityKey] : [];
  });
}

/**
 * The samples in chains: each chain in file order, to be replayed one sample after another; chains are
 * independent of each other. Samples sharing an entity share a chain (transitively: a sample touching two
 * entities joins their chains).
 */
export function entityChains(samples: Sample[]): Sample[][] {
  const parent = samples.map((_, i) => i);
  const root = (i: number): number => {
    if (parent[i] === i) return i;
    parent[i] = root(parent[i]!);
    return parent[i]!;
  };
  const firstWith = new Map<string, number>();
  samples.forEach((sample, i) => {
    for (const key of entityKeysOf(sample)) {
      const first = firstWith.get(key);
      if (first === undefined) firstWith.set(key, i);
      else parent[root(i)] = root(first);
    }
  });
  // A chain is listed where its first sample is, and keeps its samples in file order.
  const chains = new Map<number, Sample[]>();
  samples.forEach((sample, i) => {
    const chain = chains.get(root(i)) ?? [];
    chain.push(sample);
    chains.set(root(i), chain);
  });
  return [...chains.values()];
}
