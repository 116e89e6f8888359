// The registered SMART Backend Services clients: each one's public keys (as a jose key set) and the
// scopes it may be granted.
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { ALL_SYSTEM_SCOPES, parseScopeList, type Scope } from './scopes.ts';

export interface ClientRegistration {
  clientId: string;
  jwks: { keys: object[] };
  /** Default: every system scope. */
  scopes?: string[];
}

export interface RegisteredClient {
  clientId: string;
  keys: JWTVerifyGetKey;
  allowedScopes: Scope[];
}

export interface ClientRegistry {
  register(c: ClientRegistration): void;
  remove(clientId: string): void;
  get(clientId: string): RegisteredClient | undefined;
}

// Members that only a private (or symmetric) JWK has: a registry of public keys never holds them.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

function publicKeySet(clientId: string, jwks: { keys: object[] }): JWTVerifyGetKey {
  if (!jwks || !Array.isArray(jwks.keys) || jwks.keys.length === 0) {
    throw new TypeError(`client ${clientId}: jwks must be {"keys": [...]} with at least one key`);
  }
  if (jwks.keys.some((k) => PRIVATE_MEMBERS.some((m) => m in k))) {
    throw new TypeError(`client ${clientId}: jwks must hold public keys only`);
  }
  return createLocalJWKSet(jwks as JSONWebKeySet);
}

function allowedScopes(clientId: string, scopes: string[] | undefined): Scope[] {
  const parsed = parseScopeList((scopes ?? [ALL_SYSTEM_SCOPES]).join(' '));
  if (!parsed) throw new TypeError(`client ${clientId}: scopes must be SMART system scopes`);
  return parsed;
}

export function createClientRegistry(): ClientRegistry {
  const clients = new Map<string, RegisteredClient>();
  return {
    register: (c) => {
      if (typeof c.clientId !== 'string' || c.clientId === '') throw new TypeError('clientId must be a non-empty string');
      clients.set(c.clientId, { clientId: c.clientId, keys: publicKeySet(c.clientId, c.jwks), allowedScopes: allowedScopes(c.clientId, c.scopes) });
    },
    remove: (clientId) => {
      clients.delete(clientId);
    },
    get: (clientId) => clients.get(clientId),
  };
}
