// The gate in front of every FHIR interaction when sign-in is on: a bearer token valid now (401
// otherwise), then scopes that grant each interaction the request performs (403 otherwise).
import { bearerToken } from '../../http/bearer.ts';
import type { IncomingHttpHeaders } from 'node:http';
import type { OperationOutcome } from '@medplum/fhirtypes';
import { outcome } from '../http.ts';
import { requiredAccess } from './access.ts';
import type { ClientRegistry } from './clients.ts';
import { grants } from './scopes.ts';
import type { AccessGrant, TokenStore } from './tokens.ts';

export interface Refusal {
  status: 401 | 403;
  headers: Record<string, string>;
  body: OperationOutcome;
}

export type Authentication = { grant: AccessGrant } | { refusal: Refusal };

export interface RequestGuard {
  authenticate(headers: IncomingHttpHeaders): Authentication;
  /** undefined when the grant's scopes allow every interaction of the request. */
  authorize(grant: AccessGrant, method: string, url: string, body: unknown): Refusal | undefined;
}

const invalidToken = (text: string): Refusal => ({
  status: 401,
  headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
  body: outcome('login', text),
});

export function createRequestGuard(tokens: TokenStore, clients: ClientRegistry): RequestGuard {
  return {
    authenticate: (headers) => {
      const token = bearerToken(headers.authorization);
      if (!token) return { refusal: invalidToken('a bearer access token is required') };
      const grant = tokens.find(token);
      // A removed client's tokens are dropped with it; the second check keeps that true whatever the order.
      if (!grant || !clients.get(grant.clientId)) return { refusal: invalidToken('the access token is unknown, expired or revoked') };
      return { grant };
    },
    authorize: (grant, method, url, body) => {
      const missing = requiredAccess(method, url, body).find((a) => !grants(grant.scopes, a.type, a.letter));
      if (!missing) return undefined;
      return {
        status: 403,
        headers: {},
        body: outcome('forbidden', `the token's scopes do not allow '${missing.letter}' on ${missing.type}`),
      };
    },
  };
}
