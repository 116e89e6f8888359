// SMART Backend Services sign-in for the bundled FHIR server: wires the client registry, assertion check,
// token endpoint, token store and request guard, and describes itself in the smart-configuration.
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../logger.ts';
import { ASSERTION_ALGORITHMS, createAssertionVerifier } from './assertion.ts';
import { createClientRegistry } from './clients.ts';
import { createRequestGuard, type RequestGuard } from './guard.ts';
import { createJtiLedger } from './jti-ledger.ts';
import { createTokenEndpoint, type TokenEndpoint } from './token-endpoint.ts';
import { createTokenStore } from './tokens.ts';

export interface BundledAuthServer {
  /** `${baseUrl}/auth/token` — also the only accepted `aud` of client assertions. */
  tokenUrl: string;
  /** Registers (or replaces) a client by its public JWKS. scopes: what it may be granted; default every system scope (`system/*.cruds`). */
  registerClient(c: { clientId: string; jwks: { keys: object[] }; scopes?: string[] }): void;
  removeClient(clientId: string): void;
  /** Every access token issued so far stops working (tests: a revoked token). */
  revokeTokens(): void;
}

export interface BundledAuth {
  api: BundledAuthServer;
  tokenEndpoint: TokenEndpoint;
  guard: RequestGuard;
  smartConfiguration(): object;
}

export interface BundledAuthOptions {
  baseUrl: string;
  tokenLifetimeSeconds: number;
  clock: Clock;
  logger: Logger;
}

function smartConfiguration(tokenUrl: string): object {
  return {
    token_endpoint: tokenUrl,
    token_endpoint_auth_methods_supported: ['private_key_jwt'],
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGORITHMS,
    grant_types_supported: ['client_credentials'],
    scopes_supported: ['system/*.cruds', 'system/*.rs', 'system/*.read', 'system/*.write', 'system/Patient.cruds', 'system/DocumentReference.rs'],
    capabilities: ['client-confidential-asymmetric'],
  };
}

export function createBundledAuth(opts: BundledAuthOptions): BundledAuth {
  const tokenUrl = `${opts.baseUrl}/auth/token`;
  const clients = createClientRegistry();
  const tokens = createTokenStore(opts.clock);
  const verifyAssertion = createAssertionVerifier({ tokenUrl, clock: opts.clock, clients, jtis: createJtiLedger(opts.clock) });
  const api: BundledAuthServer = {
    tokenUrl,
    registerClient: (c) => {
      clients.register(c);
      opts.logger.info({ clientId: c.clientId }, 'SMART client registered');
    },
    removeClient: (clientId) => {
      clients.remove(clientId);
      tokens.revokeClient(clientId);
      opts.logger.info({ clientId }, 'SMART client removed');
    },
    revokeTokens: () => tokens.revokeAll(),
  };
  return {
    api,
    tokenEndpoint: createTokenEndpoint({ verifyAssertion, tokens, tokenLifetimeSeconds: opts.tokenLifetimeSeconds, logger: opts.logger }),
    guard: createRequestGuard(tokens, clients),
    smartConfiguration: () => smartConfiguration(tokenUrl),
  };
}
