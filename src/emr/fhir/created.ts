// The id of a record the EMR has just created or found (a create, a conditional create, a transaction entry).
// The FHIR create interaction requires a Location `[base]/[type]/[id]/_history/[vid]`; the body is optional
// (`Prefer: return=minimal`, or the server's habit), and may be an OperationOutcome rather than the record.
import type { Resource } from '@medplum/fhirtypes';

/** The id a Location (relative or absolute, versioned or not) names for `resourceType`, if it names one. */
export function idFromLocation(location: string | undefined, resourceType: string): string | undefined {
  const segments = (location ?? '').split(/[?#]/)[0]!.split('/');
  const at = segments.lastIndexOf(resourceType);
  const id = at >= 0 ? segments[at + 1] : undefined;
  return id && /^[A-Za-z0-9\-.]{1,64}$/.test(id) ? id : undefined;
}

/** The created or found record's id: its Location first, else the body when it is a resource of that type. */
export function createdId(answer: { location?: string; body?: unknown }, resourceType: string): string | undefined {
  const body = answer.body as Partial<Resource> | undefined;
  const fromBody = body?.resourceType === resourceType && typeof body.id === 'string' ? body.id : undefined;
  return idFromLocation(answer.location, resourceType) ?? fromBody;
}
