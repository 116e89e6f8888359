// The keys the bundled FHIR server's indexes (./indexed-repository.ts) are kept and searched by, pure and read as
// Medplum's own search reads a value: a token filter's `system|value` keys, and the end of the period Medplum's
// date match gives a meta.lastUpdated, with the lowest such end a _lastUpdated filter can match.
import { Operator, splitSearchOnComma, toPeriod, type Filter } from '@medplum/core';

const FOREVER = '9999'; // Medplum's own end of an open period

/**
 * The end of the period Medplum's date match gives a meta.lastUpdated (for an instant, the instant itself
 * in UTC); '' when it reads none, and such a resource matches no _lastUpdated filter.
 */
export function updatedEnd(lastUpdated: string): string {
  const period = toPeriod(lastUpdated);
  return period ? (period.end ?? FOREVER) : '';
}

/** Index of the first element >= key (`strict`: > key) in a sorted array. */
export function bound(sorted: string[], key: string, strict = false): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < key || (strict && sorted[mid] === key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The index keys a token filter's value asks for, or undefined when it cannot be answered from the index.
 * Mirrors Medplum's matchesTokenValue: `a|b` with both parts non-empty compares system and value lower-cased,
 * and a value with more bars uses its first two parts.
 */
export function tokenKeysOf(filterValue: string): string[] | undefined {
  const keys: string[] = [];
  for (const one of splitSearchOnComma(filterValue)) {
    if (!one.includes('|')) return undefined;
    const [system, value] = one.split('|').map((s) => s.toLowerCase());
    if (!system || !value) return undefined;
    keys.push(`${system}|${value}`);
  }
  return keys;
}

/**
 * The lowest `updatedEnd` a resource matching this _lastUpdated filter can have, or undefined when the
 * filter is not one the index answers. For ge Medplum needs end >= filter start; for gt end > filter end;
 * for eq start < filter end and end > filter start. Every filter value counts (they are OR'd); a value
 * Medplum cannot read as a date matches nothing and so bounds nothing.
 */
export function lowestUpdatedEnd(filter: Filter): string | undefined {
  if (filter.operator !== Operator.GREATER_THAN_OR_EQUALS && filter.operator !== Operator.GREATER_THAN && filter.operator !== Operator.EQUALS) return undefined;
  let lowest: string | undefined;
  for (const one of splitSearchOnComma(filter.value)) {
    const period = toPeriod(one);
    if (!period?.start || !period.end) continue;
    const low = [period.start, period.end].sort()[0]!; // ISO times: the earlier sorts first
    if (lowest === undefined || low < lowest) lowest = low;
  }
  return lowest ?? '\uffff'; // no readable value: nothing can match
}
