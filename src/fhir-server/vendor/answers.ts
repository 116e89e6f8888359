// The vendor profile's own answers: a refusal as a FHIR server words it (an OperationOutcome saying why), thrown
// from inside a rule and answered at the handler's edge; the ETag of every answer that carries one record; and the
// version an If-Match names, which every change of a Patient or an Appointment must carry.
import type { IncomingHttpHeaders } from 'node:http';
import type { OperationOutcomeIssue, Resource } from '@medplum/fhirtypes';
import type { FhirAnswer } from '../fhir-handler.ts';
import { outcome } from '../http.ts';

/**
 * A request refused, carrying its answer: by one of the profile's rules (counted at GET /_control/counters), or by
 * the store under a write a rule made (`byStore`: answered as the store gave it, not counted).
 */
export class Refused extends Error {
  constructor(
    readonly answer: FhirAnswer,
    readonly byStore = false,
  ) {
    super(`refused with ${answer.status}`);
  }
}

export function refuse(status: number, code: OperationOutcomeIssue['code'], text: string, headers: Record<string, string> = {}): never {
  throw new Refused({ status, body: outcome(code, text), headers });
}

export const etagOf = (versionId: string): string => `W/"${versionId}"`;

/** The answer with an ETag header when its body is one record with a version (a read, a create, a patch). */
export function withEtag(answer: FhirAnswer): FhirAnswer {
  const body = answer.body as Resource | undefined;
  const version = body?.meta?.versionId;
  if (answer.status >= 300 || !version || body.resourceType === 'Bundle' || body.resourceType === 'OperationOutcome') return answer;
  return { ...answer, headers: { ...answer.headers, etag: etagOf(version) } };
}

// An entity tag, weak or strong (RFC 9110): the version is what is between the quotes.
const ENTITY_TAG = /^(?:W\/)?"([^"]+)"$/;

/** The version the request's If-Match names: 428 when it has none, 400 when it is not one entity tag. */
export function ifMatchVersion(headers: IncomingHttpHeaders, what: string): string {
  const header = headers['if-match'];
  if (header === undefined)
    refuse(428, 'required', `${what}: this server changes a record only under If-Match: send the ETag of the version the change was made against`);
  const version = ENTITY_TAG.exec(String(header).trim())?.[1];
  if (!version) refuse(400, 'invalid', `${what}: If-Match must be one entity tag, as the ETag was (W/"<version>")`);
  return version;
}

/** 412 when the record is no longer at the version the change was made against. */
export function checkVersion(what: string, current: Resource, asked: string): void {
  const version = current.meta?.versionId ?? '';
  if (version !== asked)
    refuse(412, 'conflict', `${what} was changed since version ${asked}: it is at version ${version} now; read it again and apply the change to it`, {
      etag: etagOf(version),
    });
}
