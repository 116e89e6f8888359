// Reading one record by its id, checked: an EMR that answers a read with another type or another id (a proxy's
// error page as JSON, an OperationOutcome with 200) is not written to as if it had answered the record.
import type { Resource } from '@medplum/fhirtypes';
import { EmrError } from '../errors.ts';
import type { FhirHttp } from './http.ts';

export const recordPath = (resourceType: string, id: string) => `${resourceType}/${encodeURIComponent(id)}`;

/** GET {type}/{id} with the ETag it was answered with, refused unless the answer is that record. */
export async function readVersioned<T extends Resource>(http: FhirHttp, resourceType: T['resourceType'], id: string): Promise<{ record: T; etag?: string }> {
  const answer = await http.call<Partial<T> | undefined>('GET', recordPath(resourceType, id));
  const body = answer.body;
  if (body?.resourceType !== resourceType || body.id !== id)
    throw new EmrError(
      'emr_unavailable',
      `the EMR answered a read of ${resourceType}/${id} with ${body?.resourceType ?? 'no resource'}${body?.id ? `/${body.id}` : ''}`,
    );
  return { record: body as T, ...(answer.etag ? { etag: answer.etag } : {}) };
}

/** GET {type}/{id}, refused unless the answer is that record. */
export async function readRecord<T extends Resource>(http: FhirHttp, resourceType: T['resourceType'], id: string): Promise<T> {
  return (await readVersioned<T>(http, resourceType, id)).record;
}
