// Medplum's MemoryRepository with indexes for the searches the adapter makes, so that a claim costs the
// same with 100 records as with 100,000. MemoryRepository.search evaluates every filter's FHIRPath on every
// stored resource of the type (and parses the expression again for each one): an identifier search, which
// every claim and every conditional create or update makes, was linear in the records held, and so was the
// adapter's DocumentReference scan.
//
// The indexes only choose candidates; the answer is always Medplum's own: its search runs over the
// candidates (a scratch MemoryRepository holding copies of them, in the order the full repository holds
// them), so filters, sorting, _offset, _count, total and the Bundle's shape are exactly what the unindexed
// search gives, as long as the candidates include every resource it would match. Each index is built to
// over-approximate (see `candidates`): a candidate that does not match is dropped by Medplum's filter.
//
// - identifier: every `system|value` of the type's `identifier` search parameter (its own FHIRPath, so
//   DocumentReference.masterIdentifier too), lower-cased as Medplum's token match compares them. A search
//   whose filters include identifier=<system>|<value>[,<system>|<value>...] looks only at those resources.
// - _lastUpdated: per type, the resources sorted by the end of their lastUpdated, built on the first search
//   of that type with _lastUpdated=ge|gt|eq, then kept up to date. Such a search looks only at the resources
//   updated at or after the bound (the adapter's document scan with its watermark).
// Anything else (no such filter, :modifiers, a value with no system, lt/le/ne/sa/eb dates, or a watermark so
// far back that most of the type is a candidate) is Medplum's full scan, as before.
//
// Writes stay synchronous as in MemoryRepository (it stores before its promise settles), so the indexes
// change in the same tick as the data: a search can never see one without the other.
import {
  convertToSearchableTokens,
  evalFhirPathTyped,
  generateId,
  globalSchema,
  Operator,
  parseFhirPath,
  toTypedValue,
  type FhirPathAtom,
  type SearchRequest,
  type WithId,
} from '@medplum/core';
import { MemoryRepository } from '@medplum/fhir-router';
import { systemClock, toIso, type Clock } from '../clock.ts';
import { bound, lowestUpdatedEnd, tokenKeysOf, updatedEnd } from './index-keys.ts';
import type { Bundle, Resource } from '@medplum/fhirtypes';

interface Entry {
  /** Position in the type's insertion order (what MemoryRepository's Map iterates): kept on update, new after a delete. */
  seq: number;
  /** Index keys `system|value`, lower-cased. */
  tokens: string[];
  /** meta.lastUpdated as stored. */
  lastUpdated: string;
}

/** Resources of one type sorted by `updatedEnd`: two parallel arrays. */
interface UpdatedIndex {
  ends: string[];
  ids: string[];
}

type ParamKind = 'token' | 'date';

export class IndexedMemoryRepository extends MemoryRepository {
  private readonly entries = new Map<string, Map<string, Entry>>();
  private readonly byToken = new Map<string, Map<string, Set<string>>>();
  private readonly byUpdated = new Map<string, UpdatedIndex>();
  private readonly expressions = new Map<string, FhirPathAtom | null>();
  private nextSeq = 0;

  /** `clock` stamps meta.lastUpdated on writes, as the server's sign-in checks read time: the injected one. */
  constructor(private readonly clock: Clock = systemClock) {
    super();
  }

  /** Medplum's search parameter `code` of the type as a parsed FHIRPath, when it is of the given kind. */
  private expression(resourceType: string, code: string, kind: ParamKind): FhirPathAtom | undefined {
    const cacheKey = `${resourceType}.${code}`;
    let atom = this.expressions.get(cacheKey);
    if (atom === undefined) {
      const param = globalSchema.types[resourceType]?.searchParams?.[code];
      atom = param?.expression && param.type === kind ? parseFhirPath(param.expression) : null;
      this.expressions.set(cacheKey, atom);
    }
    return atom ?? undefined;
  }

  private tokensOf(resource: Resource): string[] {
    const atom = this.expression(resource.resourceType, 'identifier', 'token');
    if (!atom) return [];
    const keys = new Set<string>();
    for (const t of convertToSearchableTokens(evalFhirPathTyped(atom, [toTypedValue(resource)]))) {
      if (typeof t.system === 'string' && typeof t.value === 'string' && t.system && t.value) keys.add(`${t.system.toLowerCase()}|${t.value.toLowerCase()}`);
    }
    return [...keys];
  }

  /**
   * Whether the type's _lastUpdated search parameter is its meta.lastUpdated (so the index can read the
   * stored value instead of evaluating FHIRPath on every write), as it is for every R4 resource type.
   */
  private updatedIndexable(resourceType: string): boolean {
    return this.expression(resourceType, '_lastUpdated', 'date')?.original === `${resourceType}.meta.lastUpdated`;
  }

  private addToUpdated(resourceType: string, id: string, lastUpdated: string): void {
    const index = this.byUpdated.get(resourceType);
    const end = index && updatedEnd(lastUpdated);
    if (!index || !end) return;
    const at = bound(index.ends, end, true);
    index.ends.splice(at, 0, end);
    index.ids.splice(at, 0, id);
  }

  private removeFromUpdated(resourceType: string, id: string, lastUpdated: string): void {
    const index = this.byUpdated.get(resourceType);
    const end = index && updatedEnd(lastUpdated);
    if (!index || !end) return;
    for (let at = bound(index.ends, end); at < index.ends.length && index.ends[at] === end; at++) {
      if (index.ids[at] !== id) continue;
      index.ends.splice(at, 1);
      index.ids.splice(at, 1);
      return;
    }
  }

  private unindex(resourceType: string, id: string): Entry | undefined {
    const entry = this.entries.get(resourceType)?.get(id);
    if (!entry) return undefined;
    const buckets = this.byToken.get(resourceType)!;
    for (const key of entry.tokens) {
      const ids = buckets.get(key);
      ids?.delete(id);
      if (ids?.size === 0) buckets.delete(key);
    }
    this.removeFromUpdated(resourceType, id, entry.lastUpdated);
    return entry;
  }

  /** `seq` given: the place in the type's order an undo puts the resource back at. */
  private index(resource: WithId<Resource> & { meta: { lastUpdated: string } }, seq?: number): void {
    const { resourceType, id } = resource;
    const previous = this.unindex(resourceType, id);
    let entries = this.entries.get(resourceType);
    let buckets = this.byToken.get(resourceType);
    if (!entries || !buckets) {
      entries = new Map();
      buckets = new Map();
      this.entries.set(resourceType, entries);
      this.byToken.set(resourceType, buckets);
    }
    const entry: Entry = { seq: seq ?? previous?.seq ?? this.nextSeq++, tokens: this.tokensOf(resource), lastUpdated: resource.meta.lastUpdated };
    entries.set(id, entry);
    for (const key of entry.tokens) {
      const ids = buckets.get(key) ?? new Set<string>();
      buckets.set(key, ids);
      ids.add(id);
    }
    this.addToUpdated(resourceType, id, entry.lastUpdated);
  }

  /** Called before each write of the resource, while it still stands as it was (./transactional-repository.ts keeps an undo log). */
  protected beforeWrite(_resourceType: string, _id: string): void {}

  /** The resource's place in its type's order (MemoryRepository's), undefined when it is not stored. */
  protected positionOf(resourceType: string, id: string): number | undefined {
    return this.entries.get(resourceType)?.get(id)?.seq;
  }

  /**
   * Indexes the resource as MemoryRepository's maps now hold it (undefined: absent): after a delete, or after an
   * undo put it back, at the place in the type's order it had (`position`).
   */
  protected reindex(resourceType: string, id: string, stored: Resource | undefined, position: number | undefined): void {
    if (this.unindex(resourceType, id)) this.entries.get(resourceType)!.delete(id);
    if (stored) this.index(stored as WithId<Resource> & { meta: { lastUpdated: string } }, position);
  }

  override clear(): void {
    super.clear();
    this.entries.clear();
    this.byToken.clear();
    this.byUpdated.clear();
  }

  // Every write lands here (updateResource, patchResource, conditional create/update and the journal replay
  // call it). The id, versionId and lastUpdated MemoryRepository would assign are assigned first, the same
  // way and in the same key order, so the resource is indexed in the same tick it is stored.
  override createResource<T extends Resource>(resource: T): Promise<WithId<T>> {
    const meta = { ...resource.meta };
    if (!meta.versionId) meta.versionId = generateId();
    if (!meta.lastUpdated) meta.lastUpdated = toIso(this.clock.now());
    const prepared = { ...resource, id: resource.id || this.generateId(), meta } as WithId<T> & { meta: { lastUpdated: string } };
    this.beforeWrite(prepared.resourceType, prepared.id);
    const stored = super.createResource(prepared);
    this.index(prepared);
    return stored;
  }

  override deleteResource(resourceType: string, id: string): Promise<void> {
    this.beforeWrite(resourceType, id);
    const done = super.deleteResource(resourceType, id); // deleted before it returns, or a rejection when absent
    this.reindex(resourceType, id, undefined, undefined);
    return done;
  }

  /**
   * The ids that can match the search, in MemoryRepository's order, or undefined when no index applies.
   * An identifier filter wins over a _lastUpdated one (it narrows to one resource or a few).
   */
  private candidates(req: SearchRequest): string[] | undefined {
    const type = req.resourceType;
    let ids: Iterable<string> | undefined;
    for (const filter of req.filters ?? []) {
      if (filter.code !== 'identifier' || filter.operator !== Operator.EQUALS || !this.expression(type, 'identifier', 'token')) continue;
      const keys = tokenKeysOf(filter.value);
      if (!keys) continue;
      const buckets = this.byToken.get(type);
      const found = new Set<string>();
      for (const key of keys) for (const id of buckets?.get(key) ?? []) found.add(id);
      ids = found;
      break;
    }
    if (!ids) {
      for (const filter of req.filters ?? []) {
        if (filter.code !== '_lastUpdated' || !this.updatedIndexable(type)) continue;
        const lowest = lowestUpdatedEnd(filter);
        if (lowest === undefined) continue;
        const index = this.updatedIndex(type);
        ids = index.ids.slice(bound(index.ends, lowest));
        break;
      }
    }
    if (!ids) return undefined;
    const entries = this.entries.get(type);
    // Most of the type (a watermark far back): copying the candidates would cost more than the full scan.
    if (Array.isArray(ids) && ids.length > 1000 && ids.length > (entries?.size ?? 0) / 2) return undefined;
    const withSeq: [number, string][] = [];
    for (const id of ids) {
      const entry = entries?.get(id);
      if (entry) withSeq.push([entry.seq, id]);
    }
    return withSeq.sort((a, b) => a[0] - b[0]).map(([, id]) => id);
  }

  private updatedIndex(resourceType: string): UpdatedIndex {
    let index = this.byUpdated.get(resourceType);
    if (!index) {
      const sorted: [string, string][] = [];
      for (const [id, e] of this.entries.get(resourceType) ?? []) {
        const end = updatedEnd(e.lastUpdated);
        if (end) sorted.push([end, id]);
      }
      sorted.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      index = { ends: sorted.map(([end]) => end), ids: sorted.map(([, id]) => id) };
      this.byUpdated.set(resourceType, index);
    }
    return index;
  }

  override search<T extends Resource>(searchRequest: SearchRequest<T>): Promise<Bundle<WithId<T>>> {
    const ids = this.candidates(searchRequest);
    if (!ids) return super.search(searchRequest);
    // Copies taken now (readResource clones before it returns), so the answer is the data as of this call,
    // like MemoryRepository's own search.
    const copies = ids.map((id) => super.readResource(searchRequest.resourceType, id));
    return (async () => {
      const scratch = new MemoryRepository();
      for (const copy of await Promise.allSettled(copies)) if (copy.status === 'fulfilled') await scratch.createResource(copy.value);
      return scratch.search(searchRequest);
    })();
  }
}
