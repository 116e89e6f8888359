// The token of an `Authorization: Bearer <token>` header (RFC 6750), for every server here that takes one: the
// admin API, the bundled simulator's integration API, the bundled FHIR server. Undefined when there is none.
const BEARER = /^Bearer\s+(.+?)\s*$/i;

export function bearerToken(header: string | undefined): string | undefined {
  return header ? BEARER.exec(header)?.[1] : undefined;
}
