// `POST {base}/auth/token`: the OAuth 2.0 client_credentials grant with a private_key_jwt client
// assertion, answered as RFC 6749 says (JSON errors, `cache-control: no-store`).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../logger.ts';
import { BadRequestBody, readFormBody, sendJson } from '../http.ts';
import { AssertionRefused, type AssertionVerifier } from './assertion.ts';
import type { RegisteredClient } from './clients.ts';
import { covers, parseScopeList, type Scope } from './scopes.ts';
import type { TokenStore } from './tokens.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const REQUIRED = ['grant_type', 'scope', 'client_assertion_type', 'client_assertion'] as const;
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

type OAuthError = 'invalid_request' | 'invalid_client' | 'invalid_scope' | 'unsupported_grant_type';

class TokenRequestRefused extends Error {
  constructor(
    readonly status: 400 | 401 | 405,
    readonly error: OAuthError,
    message: string,
    readonly clientId?: string,
  ) {
    super(message);
  }
}

export interface TokenEndpointOptions {
  verifyAssertion: AssertionVerifier;
  tokens: TokenStore;
  tokenLifetimeSeconds: number;
  logger: Logger;
}

export type TokenEndpoint = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

async function readTokenRequest(req: IncomingMessage): Promise<Record<(typeof REQUIRED)[number], string>> {
  if (req.method !== 'POST') throw new TokenRequestRefused(405, 'invalid_request', 'the token endpoint takes POST');
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new TokenRequestRefused(400, 'invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  const form = await readFormBody(req);
  const repeated = [...new Set(form.keys())].find((k) => form.getAll(k).length > 1);
  if (repeated) throw new TokenRequestRefused(400, 'invalid_request', `${repeated} is given more than once`);
  const grantType = form.get('grant_type');
  if (grantType && grantType !== 'client_credentials') {
    throw new TokenRequestRefused(400, 'unsupported_grant_type', 'only client_credentials is supported');
  }
  const missing = REQUIRED.filter((name) => !form.get(name));
  if (missing.length > 0) throw new TokenRequestRefused(400, 'invalid_request', `missing ${missing.join(', ')}`);
  return Object.fromEntries(REQUIRED.map((name) => [name, form.get(name)!])) as Record<(typeof REQUIRED)[number], string>;
}

async function authenticate(verify: AssertionVerifier, assertionType: string, assertion: string): Promise<RegisteredClient> {
  if (assertionType !== JWT_BEARER) throw new TokenRequestRefused(401, 'invalid_client', `client_assertion_type must be ${JWT_BEARER}`);
  try {
    return await verify(assertion);
  } catch (err) {
    if (err instanceof AssertionRefused) throw new TokenRequestRefused(401, 'invalid_client', err.message, err.clientId);
    throw err;
  }
}

function grantedScopes(client: RegisteredClient, requested: string): Scope[] {
  const scopes = parseScopeList(requested);
  if (!scopes || scopes.length === 0) {
    throw new TokenRequestRefused(400, 'invalid_scope', 'scope must hold SMART system scopes', client.clientId);
  }
  const refused = scopes.filter((s) => !covers(client.allowedScopes, s));
  if (refused.length > 0) {
    throw new TokenRequestRefused(400, 'invalid_scope', `not allowed: ${refused.map((s) => s.text).join(' ')}`, client.clientId);
  }
  return scopes;
}

export function createTokenEndpoint(opts: TokenEndpointOptions): TokenEndpoint {
  return async (req, res) => {
    try {
      const form = await readTokenRequest(req);
      const client = await authenticate(opts.verifyAssertion, form.client_assertion_type, form.client_assertion);
      const scopes = grantedScopes(client, form.scope);
      const accessToken = opts.tokens.issue(client.clientId, scopes, opts.tokenLifetimeSeconds);
      const scope = scopes.map((s) => s.text).join(' ');
      opts.logger.info({ clientId: client.clientId, scope }, 'access token issued');
      sendJson(res, 200, { access_token: accessToken, token_type: 'bearer', expires_in: opts.tokenLifetimeSeconds, scope }, NO_STORE);
    } catch (err) {
      const refusal = asRefusal(err);
      opts.logger.info({ clientId: refusal.clientId, error: refusal.error, reason: refusal.message }, 'token request refused');
      sendJson(res, refusal.status, { error: refusal.error, error_description: refusal.message }, NO_STORE);
    }
  };
}

function asRefusal(err: unknown): TokenRequestRefused {
  if (err instanceof TokenRequestRefused) return err;
  if (err instanceof BadRequestBody) return new TokenRequestRefused(400, 'invalid_request', err.message);
  throw err;
}
