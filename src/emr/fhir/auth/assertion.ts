// The client assertion of SMART Backend Services (RFC 7523): a JWT signed with the adapter's key, made
// afresh for every token request so that no two share a jti.
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Clock } from '../../../clock.ts';
import type { ClientKey } from './keys.ts';

/** How far ahead the assertion expires; the rule allows at most 300 s, this leaves room for clock skew. */
export const ASSERTION_LIFETIME_SECONDS = 240;

export function createClientAssertion(opts: { key: ClientKey; clientId: string; tokenUrl: string; clock: Clock }): Promise<string> {
  const now = Math.floor(opts.clock.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: opts.key.alg, kid: opts.key.kid, typ: 'JWT' })
    .setIssuer(opts.clientId)
    .setSubject(opts.clientId)
    .setAudience(opts.tokenUrl)
    .setIssuedAt(now)
    .setExpirationTime(now + ASSERTION_LIFETIME_SECONDS)
    .setJti(randomUUID())
    .sign(opts.key.privateKey);
}
