// The store as the vendor profile's own rules use it, past its refusals: one record read, written under its
// version, created or removed, each a store request (so journaled as any write) told to `onChange` (the Slot
// index follows every Slot written), and one lock so that a rule's reads and the writes that follow from them
// never interleave with another rule's.
import type { Resource } from '@medplum/fhirtypes';
import type { FhirAnswer, FhirHandler } from '../fhir-handler.ts';
import { etagOf, Refused } from './answers.ts';

export type Stored<T extends Resource = Resource> = T & { id: string; meta: { versionId: string } };

export interface Records {
  read<T extends Resource>(type: T['resourceType'], id: string): Promise<Stored<T> | undefined>;
  /** Writes the record by its id (a new version of the one read, or a new record); a refusal throws Refused. */
  write<T extends Resource>(record: T & { id: string }): Promise<Stored<T>>;
  /** POSTs the record: the store gives it its id. */
  create<T extends Resource>(record: T): Promise<FhirAnswer & { body: Stored<T> }>;
  remove(type: string, id: string): Promise<void>;
  /** Every record of the type the store holds. */
  all<T extends Resource>(type: T['resourceType']): Promise<Stored<T>[]>;
  /** Runs `work` when no other work of the lock runs, and before any asked for after it. */
  serially<R>(work: () => Promise<R>): Promise<R>;
}

const PAGE = 100_000;

/** Told of each record written (`record`) or removed (undefined) through these records. */
export type OnChange = (type: string, id: string, record: Stored | undefined) => void;

export function createRecords(store: FhirHandler, onChange: OnChange = () => {}): Records {
  let tail: Promise<unknown> = Promise.resolve();
  const ok = (answer: FhirAnswer): FhirAnswer => {
    if (answer.status >= 300) throw new Refused(answer, true);
    return answer;
  };
  return {
    async read(type, id) {
      const answer = await store({ method: 'GET', url: `/${type}/${id}`, headers: {}, body: undefined });
      return answer.status === 200 ? (answer.body as never) : undefined;
    },
    async write(record) {
      const version = record.meta?.versionId;
      const headers = version ? { 'if-match': etagOf(version) } : {};
      const written = ok(await store({ method: 'PUT', url: `/${record.resourceType}/${record.id}`, headers, body: record })).body as Stored;
      onChange(record.resourceType, record.id, written);
      return written as never;
    },
    async create(record) {
      const answer = ok(await store({ method: 'POST', url: `/${record.resourceType}`, headers: {}, body: record }));
      const created = answer.body as Stored;
      onChange(created.resourceType, created.id, created);
      return answer as never;
    },
    async remove(type, id) {
      ok(await store({ method: 'DELETE', url: `/${type}/${id}`, headers: {}, body: undefined }));
      onChange(type, id, undefined);
    },
    async all(type) {
      const found: never[] = [];
      for (let offset = 0; ; offset += PAGE) {
        const answer = ok(await store({ method: 'GET', url: `/${type}?_count=${PAGE}&_offset=${offset}`, headers: {}, body: undefined }));
        const entries = ((answer.body as { entry?: { resource: never }[] }).entry ?? []).map((e) => e.resource);
        found.push(...entries);
        if (entries.length < PAGE) return found;
      }
    },
    serially(work) {
      const run = tail.then(() => work());
      tail = run.catch(() => undefined);
      return run;
    },
  };
}
