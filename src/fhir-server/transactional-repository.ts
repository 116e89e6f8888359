// Transactions for the bundled FHIR server's repository, so that a transaction Bundle is all or nothing as on a
// FHIR server over a database. MemoryRepository's withTransaction only runs its callback: an entry that failed
// left the entries before it written.
//
// - Undo: the first write of a resource inside a transaction keeps how it stood (the stored resource, its
//   versions, its place in the type's order). A callback that throws puts each such resource back, in
//   MemoryRepository's maps and in the indexes, and its error goes on. Only what the transaction touched is
//   kept, never a copy of the store.
// - One at a time: two transactions interleaving at their awaits could read each other's uncommitted records
//   (a conditional create finding a patient that is then rolled back), and a rollback could put back a record
//   the other wrote since. Transactions wait in a queue. A write from outside every transaction is a transaction
//   of its own, in the same queue, so no rollback ever undoes it; a read from outside waits for the
//   transactions queued before it, so it never sees an uncommitted record, and runs at once when none is.
//   (The server's requests do not interleave today, as none waits on I/O; a callback that awaits a timer or
//   a file would, and the queue is what keeps that correct.)
// - Nested: withTransaction called inside a transaction (Medplum's conditional create, within a transaction
//   Bundle) joins it, neither committing nor rolling back on its own; its error, let through, rolls back the
//   whole.
// Which calls are inside which transaction is told by the async context (AsyncLocalStorage): the callback and
// every promise it awaits carry the transaction.
import { AsyncLocalStorage } from 'node:async_hooks';
import { deepClone, type SearchRequest, type WithId } from '@medplum/core';
import type { MemoryRepository, UpdateResourceOptions } from '@medplum/fhir-router';
import type { Bundle, Resource } from '@medplum/fhirtypes';
import type { Clock } from '../clock.ts';
import { IndexedMemoryRepository } from './indexed-repository.ts';

/** MemoryRepository's private storage (Medplum 5.0.10) that an undo puts back: each type's resources and versions by id. */
interface MemoryStorage {
  resources: Map<string, Map<string, Resource>>;
  history: Map<string, Map<string, Resource[]>>;
}

function storageOf(repo: MemoryRepository): MemoryStorage {
  const storage = repo as unknown as Partial<MemoryStorage>;
  if (!(storage.resources instanceof Map) || !(storage.history instanceof Map))
    throw new Error("@medplum/fhir-router's MemoryRepository no longer keeps `resources` and `history` maps: transactions could not be undone");
  return storage as MemoryStorage;
}

/** How a resource stood before a transaction first wrote it; undefined fields: it was not there. */
interface Before {
  resourceType: string;
  id: string;
  resource: Resource | undefined;
  versions: Resource[] | undefined;
  position: number | undefined;
}

interface Transaction {
  befores: Map<string, Before>;
  /** Set once it has committed or rolled back: a straggling promise it left carries it but is no longer in it. */
  ended: boolean;
}

type PatchOperations = Parameters<MemoryRepository['patchResource']>[2];

export class TransactionalRepository extends IndexedMemoryRepository {
  private readonly current = new AsyncLocalStorage<Transaction>();
  private readonly storage: MemoryStorage;
  /** Settles when the last transaction queued has ended. */
  private queue: Promise<void> = Promise.resolve();
  /** Transactions queued or running. */
  private open = 0;

  constructor(clock?: Clock) {
    super(clock);
    this.storage = storageOf(this);
  }

  private inTransaction(): Transaction | undefined {
    const tx = this.current.getStore();
    return tx && !tx.ended ? tx : undefined;
  }

  override withTransaction<R>(callback: (client: undefined) => Promise<R>): Promise<R> {
    if (this.inTransaction()) return callback(undefined);
    const tx: Transaction = { befores: new Map(), ended: false };
    const run = this.queue.then(() => this.current.run(tx, () => this.attempt(tx, callback)));
    this.open++;
    const ended = () => {
      this.open--;
    };
    this.queue = run.then(ended, ended);
    return run;
  }

  private async attempt<R>(tx: Transaction, callback: (client: undefined) => Promise<R>): Promise<R> {
    try {
      return await callback(undefined);
    } catch (err) {
      this.undo(tx);
      throw err;
    } finally {
      tx.ended = true;
    }
  }

  protected override beforeWrite(resourceType: string, id: string): void {
    const tx = this.inTransaction();
    const key = `${resourceType}/${id}`;
    if (!tx || tx.befores.has(key)) return;
    tx.befores.set(key, {
      resourceType,
      id,
      resource: this.storage.resources.get(resourceType)?.get(id),
      versions: this.storage.history.get(resourceType)?.get(id)?.slice(),
      position: this.positionOf(resourceType, id),
    });
  }

  private undo(tx: Transaction): void {
    const { resources, history } = this.storage;
    const reorder = new Set<string>();
    for (const { resourceType, id, resource, versions, position } of tx.befores.values()) {
      // The maps of a type are never removed once made (but by clear()), so a resource that was there still has its type's.
      if (resource) resources.get(resourceType)!.set(id, resource);
      else resources.get(resourceType)?.delete(id);
      if (versions) history.get(resourceType)!.set(id, versions);
      else history.get(resourceType)?.delete(id);
      // Deleted (and maybe made again) in the transaction: Map.set put it back at the end of the type's order.
      if (resource && this.positionOf(resourceType, id) !== position) reorder.add(resourceType);
      this.reindex(resourceType, id, resource, position);
    }
    for (const resourceType of reorder) this.restoreOrder(resourceType);
  }

  /** MemoryRepository's search answers in its Map's order, which the index positions keep. */
  private restoreOrder(resourceType: string): void {
    const stored = this.storage.resources.get(resourceType)!;
    const ordered = [...stored].sort(([a], [b]) => this.positionOf(resourceType, a)! - this.positionOf(resourceType, b)!);
    stored.clear();
    for (const [id, resource] of ordered) stored.set(id, resource);
  }

  private write<R>(op: () => Promise<R>): Promise<R> {
    return this.inTransaction() ? op() : this.withTransaction(op);
  }

  private read<R>(op: () => Promise<R>): Promise<R> {
    return this.open === 0 || this.inTransaction() ? op() : this.queue.then(op);
  }

  // updateResource and patchResource store through createResource; conditional writes call withTransaction.
  override createResource<T extends Resource>(resource: T): Promise<WithId<T>> {
    return this.write(() => super.createResource(resource));
  }

  override updateResource<T extends Resource>(resource: T, options?: UpdateResourceOptions): Promise<WithId<T>> {
    return this.write(() => super.updateResource(resource, options));
  }

  override patchResource<T extends Resource>(resourceType: T['resourceType'], id: string, patch: PatchOperations): Promise<WithId<T>> {
    return this.write(() => super.patchResource<T>(resourceType, id, patch));
  }

  override deleteResource(resourceType: string, id: string): Promise<void> {
    return this.write(() => super.deleteResource(resourceType, id));
  }

  // readReference(s), searchByReference and FhirRepository's searchResources/searchOne read through these.
  override readResource<T extends Resource>(resourceType: string, id: string): Promise<T> {
    return this.read(() => super.readResource<T>(resourceType, id));
  }

  // Medplum's own reverses the stored versions in place: every read flipped them, and an update after a read
  // appended the new version amid the old ones, so _history came back out of order.
  override readHistory<T extends Resource>(resourceType: string, id: string): Promise<Bundle<T>> {
    return this.read(async () => {
      await super.readResource(resourceType, id); // gone or never there: Medplum's not-found, as before
      const newestFirst = [...(this.storage.history.get(resourceType)?.get(id) ?? [])].reverse();
      const entry = newestFirst.map((version) => ({ resource: deepClone(version) as T }));
      return { resourceType: 'Bundle', type: 'history', ...(entry.length ? { entry } : {}) } as Bundle<T>;
    });
  }

  override readVersion<T extends Resource>(resourceType: string, id: string, versionId: string): Promise<T> {
    return this.read(() => super.readVersion<T>(resourceType, id, versionId));
  }

  override search<T extends Resource>(searchRequest: SearchRequest<T>): Promise<Bundle<WithId<T>>> {
    return this.read(() => super.search(searchRequest));
  }
}
