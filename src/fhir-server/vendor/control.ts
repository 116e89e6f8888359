// The vendor profile's control routes, for tests and demos (outside the FHIR types, no sign-in):
// - GET /_control/counters: what the profile was asked (./counters.ts).
// - POST /_control/staff-edit/{type}/{id} with a JSON Patch, or PUT with a whole record: a change made as the EMR's
//   own staff would make it. No If-Match, no refusal, no booking rule and no effect beyond the record (a Slot opened
//   or blocked, a note added to an Appointment, a Schedule's hours changed); a new version as any change, so a client
//   holding the version before gets 412 on its next PATCH. 200 with the record and its ETag (201 when a PUT made it).
import type { Resource } from '@medplum/fhirtypes';
import type { FhirAnswer } from '../fhir-handler.ts';
import { outcome } from '../http.ts';
import { Refused, withEtag } from './answers.ts';
import { notFound, patched, patchOf } from './changes.ts';
import type { CountersSnapshot } from './counters.ts';
import type { Records } from './records.ts';

const STAFF_EDIT = /^\/_control\/staff-edit\/([A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})$/;
const ROUTES = 'GET /_control/counters, POST /_control/staff-edit/{type}/{id} (a JSON Patch), PUT /_control/staff-edit/{type}/{id} (a whole record)';

async function staffEdit(records: Records, method: string, type: string, id: string, body: unknown): Promise<FhirAnswer> {
  const what = `${type}/${id}`;
  const current = await records.read(type as Resource['resourceType'], id);
  if (method === 'POST') {
    const operations = patchOf(body, what);
    if (!current) return notFound(what);
    return { status: 200, body: await records.write(patched(current, operations, what)), headers: {} };
  }
  const record = body as Resource | undefined;
  if (record?.resourceType !== type || record.id !== id)
    return { status: 400, body: outcome('invalid', `${what}: the body must be the whole record, with this resourceType and id`), headers: {} };
  const written = await records.write({ ...record, id, meta: current?.meta ?? {} });
  return { status: current ? 200 : 201, body: written, headers: {} };
}

export async function controlRoute(
  deps: { records: Records; counters: () => CountersSnapshot },
  method: string,
  path: string,
  body: unknown,
): Promise<FhirAnswer> {
  if (path === '/_control/counters' && method === 'GET') return { status: 200, body: deps.counters(), headers: {} };
  const edit = STAFF_EDIT.exec(path);
  if (!edit || (method !== 'POST' && method !== 'PUT')) return { status: 404, body: { error: `the control routes are ${ROUTES}` }, headers: {} };
  try {
    return withEtag(await deps.records.serially(() => staffEdit(deps.records, method, edit[1]!, edit[2]!, body)));
  } catch (err) {
    if (err instanceof Refused) return err.answer;
    throw err;
  }
}
