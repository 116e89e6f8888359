// Changing a record the EMR holds without erasing what its staff added: read it, apply the change to what is
// there, and write it back under If-Match (the version read), as a PUT where the CapabilityStatement declares
// update, as a JSON Patch (RFC 6902) where it declares only patch. A 412 means the staff changed the record
// meanwhile: read it again and apply the change to what is there now, a few rounds at most (then a conflict for
// a person, not a loop). A change is never sent without If-Match once the record has a version; a record the EMR
// gives no version is written as before, and an EMR that then answers 428 is refused the same way.
import type { Resource } from '@medplum/fhirtypes';
import { EmrError } from '../errors.ts';
import type { CapabilityCheck } from './capabilities.ts';
import type { FhirHttp } from './http.ts';
import { readVersioned, recordPath } from './read.ts';

/** Rounds of read, apply and write after a 412, at most. */
export const MAX_CHANGE_ROUNDS = 4;

/** A JSON Patch operation (RFC 6902), of the kinds a top-level change needs. */
export type PatchOperation = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/** Fields the server keeps for itself: never patched. */
const SERVER_FIELDS = new Set(['id', 'meta', 'resourceType']);

/** `W/"3"` or `"3"`: the entity tag as sent, when it is one (RFC 9110); undefined otherwise. */
export function entityTag(etag: string | undefined): string | undefined {
  const t = etag?.trim();
  return t && /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/.test(t) ? t : undefined;
}

/** The If-Match a change is sent with: the ETag the read answered, else the record's versionId as a weak tag. */
export function ifMatchOf(etag: string | undefined, resource: Resource): string | undefined {
  const tag = entityTag(etag);
  if (tag) return tag;
  const version = resource.meta?.versionId;
  return version && /^[A-Za-z0-9\-.]{1,64}$/.test(version) ? `W/"${version}"` : undefined;
}

/** JSON Pointer's escaping of one key (RFC 6901). */
const pointer = (key: string) => `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** The top-level operations that turn `from` into `to` (fields the server keeps aside); empty when they agree. */
export function patchBetween(from: Resource, to: Resource): PatchOperation[] {
  const a = from as unknown as Record<string, unknown>;
  const b = to as unknown as Record<string, unknown>;
  const ops: PatchOperation[] = [];
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (SERVER_FIELDS.has(key)) continue;
    if (!(key in b)) ops.push({ op: 'remove', path: pointer(key) });
    else if (!(key in a)) ops.push({ op: 'add', path: pointer(key), value: b[key] });
    else if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) ops.push({ op: 'replace', path: pointer(key), value: b[key] });
  }
  return ops;
}

export interface Changes {
  /**
   * Applies `change` to the record as the EMR holds it now and writes the result back; `change` answers undefined
   * when nothing needs to change (nothing is written). Resolves to whether a write was made.
   */
  change<T extends Resource>(resourceType: T['resourceType'], id: string, change: (current: T) => T | undefined | Promise<T | undefined>): Promise<boolean>;
}

export function createChanges(http: FhirHttp, capabilities: CapabilityCheck): Changes {
  async function send(resourceType: string, id: string, current: Resource, next: Resource, ifMatch: string | undefined): Promise<boolean> {
    const headers: Record<string, string> = ifMatch ? { 'if-match': ifMatch } : {};
    if ((await capabilities.current()).changeBy(resourceType) === 'patch') {
      const ops = patchBetween(current, next);
      if (!ops.length) return false;
      await http.call('PATCH', recordPath(resourceType, id), ops, { ...headers, 'content-type': 'application/json-patch+json' });
    } else {
      if (!patchBetween(current, next).length) return false;
      await http.call('PUT', recordPath(resourceType, id), { ...next, id }, headers);
    }
    return true;
  }

  /**
   * One write of `next` over `current` under `ifMatch`. A version conflict rejects as VERSION_CONFLICT for the
   * caller's next round: 412, or 409 as Oracle Health answers a stale If-Match. A record being edited (423) is an
   * outage of that record: retried later.
   */
  async function write(resourceType: string, id: string, current: Resource, next: Resource, ifMatch: string | undefined): Promise<boolean> {
    try {
      return await send(resourceType, id, current, next, ifMatch);
    } catch (err) {
      if (!(err instanceof EmrError)) throw err;
      const status = err.httpStatus;
      if (ifMatch === undefined && (status === 412 || status === 428))
        throw new EmrError(
          'emr_rejected',
          `the EMR wants If-Match to change ${resourceType}/${id} and gave the record no version (no ETag, no meta.versionId)`,
          428,
        );
      if (ifMatch !== undefined && (status === 409 || status === 412)) throw VERSION_CONFLICT;
      if (status === 423) throw new EmrError('emr_unavailable', `${resourceType}/${id} is locked in the EMR (423): tried again later`, 423, err);
      throw err;
    }
  }

  return {
    async change(resourceType, id, change) {
      for (let round = 1; ; round++) {
        const { record: current, etag } = await readVersioned<Parameters<typeof change>[0]>(http, resourceType, id);
        const next = await change(current);
        if (next === undefined) return false;
        try {
          return await write(resourceType, id, current, next, ifMatchOf(etag, current));
        } catch (err) {
          if (err !== VERSION_CONFLICT) throw err;
          if (round >= MAX_CHANGE_ROUNDS)
            throw new EmrError(
              'emr_edit_conflict',
              `${resourceType}/${id} changed in the EMR during each of ${MAX_CHANGE_ROUNDS} attempts to write it (its version moved each time): a person should look at who else edits it`,
              412,
            );
        }
      }
    },
  };
}

/** The staff changed the record since it was read: read again and apply again. */
const VERSION_CONFLICT = new Error('version conflict');
