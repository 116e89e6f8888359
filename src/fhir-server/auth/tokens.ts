// Access tokens issued by the bundled token endpoint: random and opaque, each bound to a client, its
// granted scopes and an expiry read from the injected clock. Kept in memory only.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { Scope } from './scopes.ts';

export interface AccessGrant {
  clientId: string;
  scopes: readonly Scope[];
  expiresAtMs: number;
}

export interface TokenStore {
  issue(clientId: string, scopes: readonly Scope[], lifetimeSeconds: number): string;
  /** The grant behind a token that is valid now; undefined otherwise. */
  find(token: string): AccessGrant | undefined;
  revokeAll(): void;
  revokeClient(clientId: string): void;
}

export function createTokenStore(clock: Clock): TokenStore {
  const grants = new Map<string, AccessGrant>();

  function forgetExpired(now: number): void {
    for (const [token, grant] of grants) if (grant.expiresAtMs <= now) grants.delete(token);
  }

  return {
    issue: (clientId, scopes, lifetimeSeconds) => {
      const now = clock.now();
      forgetExpired(now);
      const token = randomBytes(32).toString('base64url');
      grants.set(token, { clientId, scopes, expiresAtMs: now + lifetimeSeconds * 1000 });
      return token;
    },
    find: (token) => {
      const grant = grants.get(token);
      return grant && grant.expiresAtMs > clock.now() ? grant : undefined;
    },
    revokeAll: () => grants.clear(),
    revokeClient: (clientId) => {
      for (const [token, grant] of grants) if (grant.clientId === clientId) grants.delete(token);
    },
  };
}
