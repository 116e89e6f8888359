// A change of a Patient or an Appointment as the vendor profile takes it: a JSON Patch (RFC 6902) under If-Match
// (428 without it, 412 when the record is at another version now), applied to the record as it stands and written
// as one new version; an Appointment's through the booking rules (./appointments.ts). The answer is 200 with the
// record as written, and its new ETag. A staff edit (./control.ts) is the same patch without If-Match or rules.
import type { Appointment, Resource } from '@medplum/fhirtypes';
import { outcome } from '../http.ts';
import type { FhirAnswer, FhirRequest } from '../fhir-handler.ts';
import { checkVersion, ifMatchVersion, refuse } from './answers.ts';
import { changeAppointment } from './appointments.ts';
import { applyPatch, PatchError, type PatchOperation, parsePatch } from './json-patch.ts';
import type { Records, Stored } from './records.ts';

/** The patch's operations, or 400 saying why the body is not one. */
export function patchOf(body: unknown, what: string): PatchOperation[] {
  try {
    return parsePatch(body);
  } catch (err) {
    if (err instanceof PatchError) refuse(400, 'invalid', `${what}: ${err.message}`);
    throw err;
  }
}

/** The record with the patch applied, kept at its type, id and version; 422 when the patch does not apply. */
export function patched<T extends Resource>(current: Stored<T>, operations: PatchOperation[], what: string): Stored<T> {
  let next: Stored<T>;
  try {
    next = applyPatch(current, operations);
  } catch (err) {
    if (err instanceof PatchError) refuse(422, 'invalid', `${what}: the patch does not apply: ${err.message}`);
    throw err;
  }
  if (next.resourceType !== current.resourceType || next.id !== current.id) refuse(422, 'invalid', `${what}: a patch does not change resourceType or id`);
  return { ...next, meta: current.meta };
}

export const notFound = (what: string): FhirAnswer => ({ status: 404, body: outcome('not-found', `${what} does not exist`), headers: {} });

/** PATCH {type}/{id} of a type whose rules take patch. Under the records' lock. */
export async function patchRecord(records: Records, req: FhirRequest, type: string, id: string): Promise<FhirAnswer> {
  const what = `${type}/${id}`;
  const version = ifMatchVersion(req.headers, what);
  const operations = patchOf(req.body, what);
  const current = await records.read(type as Resource['resourceType'], id);
  if (!current) return notFound(what);
  checkVersion(what, current, version);
  const next = patched(current, operations, what);
  const written =
    type === 'Appointment' ? await changeAppointment(records, current as Stored<Appointment>, next as Stored<Appointment>) : await records.write(next);
  return { status: 200, body: written, headers: {} };
}
