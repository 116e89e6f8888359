// SMART Backend Services sign-in of the bundled FHIR server: the token endpoint's checks of client
// assertions (built here independently with jose), the bearer/scope guard (every entry of a transaction too),
// and conditionalCreate: false.
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { startFhirServer, type RunningFhirServer } from '../../src/fhir-server/server.ts';
import { silentLogger } from '../../src/logger.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

interface TestKey {
  alg: 'ES384' | 'RS384';
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function makeKey(alg: 'ES384' | 'RS384', kid: string): Promise<TestKey> {
  const pair = await generateKeyPair(alg, alg === 'RS384' ? { modulusLength: 2048 } : {});
  return { alg, kid, privateKey: pair.privateKey, publicJwk: { ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' } };
}

let es: TestKey;
let rs: TestKey;
let impostor: TestKey;
beforeAll(async () => {
  [es, rs, impostor] = await Promise.all([makeKey('ES384', 'es-1'), makeKey('RS384', 'rs-1'), makeKey('ES384', 'es-1')]);
});

const servers: RunningFhirServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

interface Setup {
  server: RunningFhirServer;
  clock: ManualClock;
  tokenUrl: string;
}

async function startSignedIn(opts: { tokenLifetimeSeconds?: number; scopes?: string[] } = {}): Promise<Setup> {
  const clock = createManualClock();
  const server = await startFhirServer({
    logger: silentLogger(),
    clock,
    auth: opts.tokenLifetimeSeconds ? { tokenLifetimeSeconds: opts.tokenLifetimeSeconds } : {},
  });
  servers.push(server);
  server.auth!.registerClient({ clientId: 'bridge-es', jwks: { keys: [es.publicJwk] }, ...(opts.scopes ? { scopes: opts.scopes } : {}) });
  server.auth!.registerClient({ clientId: 'bridge-rs', jwks: { keys: [rs.publicJwk] } });
  return { server, clock, tokenUrl: server.auth!.tokenUrl };
}

interface AssertionOptions {
  key?: TestKey;
  clientId?: string;
  aud?: string;
  /** Seconds from the server clock's now. */
  expiresIn?: number;
  jti?: string;
}

async function assertion(setup: Setup, o: AssertionOptions = {}): Promise<string> {
  const key = o.key ?? es;
  const clientId = o.clientId ?? 'bridge-es';
  const now = Math.floor(setup.clock.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(o.aud ?? setup.tokenUrl)
    .setIssuedAt(now)
    .setExpirationTime(now + (o.expiresIn ?? 240))
    .setJti(o.jti ?? randomUUID())
    .sign(key.privateKey);
}

async function tokenRequest(setup: Setup, fields: Record<string, string>) {
  const res = await fetch(setup.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

async function requestWith(setup: Setup, clientAssertion: string, scope = 'system/*.cruds', grantType = 'client_credentials') {
  return tokenRequest(setup, { grant_type: grantType, scope, client_assertion_type: JWT_BEARER, client_assertion: clientAssertion });
}

async function accessToken(setup: Setup, o: AssertionOptions = {}, scope = 'system/*.cruds'): Promise<string> {
  const res = await requestWith(setup, await assertion(setup, o), scope);
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

const patient = { resourceType: 'Patient', identifier: [{ system: 'urn:test', value: 'pat_1' }], name: [{ text: 'Test Patient' }] };

function fhir(setup: Setup, path: string, init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  return fetch(`${setup.server.baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.body ? { 'content-type': 'application/fhir+json' } : {}),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...init.headers,
    },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });
}

async function createPatient(setup: Setup, token: string) {
  return fhir(setup, '/Patient', { method: 'POST', token, body: patient });
}

describe('bundled FHIR server sign-in: discovery and public documents', () => {
  it('publishes a smart-configuration naming the token endpoint and private_key_jwt', async () => {
    const setup = await startSignedIn();
    const res = await fetch(`${setup.server.baseUrl}/.well-known/smart-configuration`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.token_endpoint).toBe(`${setup.server.baseUrl}/auth/token`);
    expect(body.token_endpoint_auth_methods_supported).toEqual(['private_key_jwt']);
    expect(body.token_endpoint_auth_signing_alg_values_supported).toEqual(['RS384', 'ES384']);
    expect(body.grant_types_supported).toEqual(['client_credentials']);
    expect(body.capabilities).toEqual(['client-confidential-asymmetric']);
    expect((body.scopes_supported as string[]).length).toBeGreaterThan(0);
  });

  it('serves /metadata without a token, declaring the types, conditional create and the token URL', async () => {
    const setup = await startSignedIn();
    const res = await fetch(`${setup.server.baseUrl}/metadata`);
    expect(res.status).toBe(200);
    const cs = (await res.json()) as {
      fhirVersion: string;
      rest: {
        mode: string;
        resource: { type: string; conditionalCreate: boolean; conditionalUpdate: boolean; interaction: { code: string }[] }[];
        security: { extension: { extension: { url: string; valueUri: string }[] }[] };
      }[];
    };
    expect(cs.fhirVersion).toBe('4.0.1');
    const rest = cs.rest[0]!;
    expect(rest.mode).toBe('server');
    expect(rest.resource.map((r) => r.type)).toEqual(['Patient', 'Practitioner', 'Location', 'Appointment', 'DocumentReference', 'Binary', 'Communication']);
    expect(rest.resource.every((r) => r.conditionalCreate === true && r.conditionalUpdate === true)).toBe(true);
    expect(rest.resource[0]!.interaction.map((i) => i.code)).toEqual(['read', 'search-type', 'create', 'update']);
    expect((rest as { interaction?: { code: string }[] }).interaction?.map((i) => i.code)).toEqual(['transaction', 'batch']);
    expect(rest.security.extension[0]!.extension).toEqual([{ url: 'token', valueUri: setup.tokenUrl }]);
  });

  it('has no smart-configuration when sign-in is off', async () => {
    const server = await startFhirServer({ logger: silentLogger() });
    servers.push(server);
    expect(server.auth).toBeUndefined();
    expect((await fetch(`${server.baseUrl}/.well-known/smart-configuration`)).status).toBe(404);
  });
});

describe('bundled FHIR server sign-in: tokens that work', () => {
  it.each([
    ['ES384', 'bridge-es'],
    ['RS384', 'bridge-rs'],
  ] as const)('issues a token for a valid %s assertion that reads and writes Patient', async (alg, clientId) => {
    const setup = await startSignedIn();
    const res = await requestWith(setup, await assertion(setup, { key: alg === 'ES384' ? es : rs, clientId }), 'system/Patient.cruds');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({ token_type: 'bearer', expires_in: 300, scope: 'system/Patient.cruds' });
    const token = res.body.access_token as string;
    expect(token.length).toBeGreaterThanOrEqual(32);
    const created = await createPatient(setup, token);
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const read = await fhir(setup, `/Patient/${id}`, { token });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { id: string }).id).toBe(id);
    const updated = await fhir(setup, `/Patient/${id}`, { method: 'PUT', token, body: { ...patient, id, name: [{ text: 'Renamed' }] } });
    expect(updated.status).toBe(200);
  });

  it('grants SMART v1 scopes with the same meaning as their v2 letters', async () => {
    const setup = await startSignedIn();
    const token = await accessToken(setup, {}, 'system/Patient.read');
    expect((await fhir(setup, '/Patient?identifier=urn:test|pat_1', { token })).status).toBe(200);
    expect((await createPatient(setup, token)).status).toBe(403);
  });
});

describe('bundled FHIR server sign-in: requests without a valid token', () => {
  it('answers 401 invalid_token to a FHIR request without a token or with a made-up one', async () => {
    const setup = await startSignedIn();
    for (const token of [undefined, 'made-up-token']) {
      const res = await fhir(setup, '/Patient', token ? { token } : {});
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      expect(((await res.json()) as { resourceType: string }).resourceType).toBe('OperationOutcome');
    }
  });

  it('answers 403 with an OperationOutcome when the token lacks the scope for the interaction', async () => {
    const setup = await startSignedIn();
    const token = await accessToken(setup, {}, 'system/Patient.rs');
    const res = await createPatient(setup, token);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { resourceType: string }).resourceType).toBe('OperationOutcome');
    expect((await fhir(setup, '/Practitioner', { token })).status).toBe(403);
    expect((await fhir(setup, '/Patient', { token })).status).toBe(200);
  });

  it("authorizes every entry of a transaction with the token's scopes: one entry out of scope refuses the whole Bundle (403)", async () => {
    const setup = await startSignedIn();
    const token = await accessToken(setup, {}, 'system/Patient.cruds');
    const entry = (resource: { resourceType: string }, value: string) => ({
      resource: { ...resource, identifier: [{ system: 'urn:test', value }] },
      request: { method: 'POST', url: resource.resourceType, ifNoneExist: `identifier=urn:test|${value}` },
    });
    const transaction = (...entries: ReturnType<typeof entry>[]) => ({ resourceType: 'Bundle', type: 'transaction', entry: entries });
    const refused = await fhir(setup, '/', {
      method: 'POST',
      token,
      body: transaction(entry(patient, 'pat_txn'), entry({ resourceType: 'Practitioner' }, 'doc_txn')),
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { issue: { details: { text: string } }[] }).issue[0]!.details.text).toContain('Practitioner');
    expect((await fhir(setup, '/Patient?identifier=urn:test|pat_txn', { token }).then((r) => r.json())) as { entry?: unknown[] }).not.toHaveProperty('entry');
    expect((await fhir(setup, '/', { method: 'POST', token, body: transaction(entry(patient, 'pat_txn')) })).status).toBe(200);
  });

  it('refuses a token once the clock passes its lifetime', async () => {
    const setup = await startSignedIn({ tokenLifetimeSeconds: 60 });
    const token = await accessToken(setup);
    setup.clock.advance(59_000);
    expect((await fhir(setup, '/Patient', { token })).status).toBe(200);
    setup.clock.advance(2_000);
    const res = await fhir(setup, '/Patient', { token });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('refuses every token issued before revokeTokens, and issues new ones after', async () => {
    const setup = await startSignedIn();
    const token = await accessToken(setup);
    expect((await fhir(setup, '/Patient', { token })).status).toBe(200);
    setup.server.auth!.revokeTokens();
    expect((await fhir(setup, '/Patient', { token })).status).toBe(401);
    expect((await fhir(setup, '/Patient', { token: await accessToken(setup) })).status).toBe(200);
  });

  it('refuses a removed client its tokens and any new token (401 invalid_client)', async () => {
    const setup = await startSignedIn();
    const token = await accessToken(setup);
    setup.server.auth!.removeClient('bridge-es');
    expect((await fhir(setup, '/Patient', { token })).status).toBe(401);
    const res = await requestWith(setup, await assertion(setup));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });
});

describe('bundled FHIR server sign-in: refused token requests', () => {
  const invalidClient: [string, RegExp, (s: Setup) => Promise<string>][] = [
    ['an aud other than the token URL', /aud/, (s) => assertion(s, { aud: `${s.server.baseUrl}/token` })],
    ['an expired assertion', /exp/, (s) => assertion(s, { expiresIn: -10 })],
    ['an exp more than 300 s ahead', /300 s/, (s) => assertion(s, { expiresIn: 301 })],
    ['an unknown client', /unknown client/, (s) => assertion(s, { clientId: 'stranger' })],
    ['a signature by another key under the same kid', /signature/, (s) => assertion(s, { key: impostor })],
    [
      'alg HS256',
      /alg/,
      (s) =>
        new SignJWT({})
          .setProtectedHeader({ alg: 'HS256', kid: 'es-1' })
          .setIssuer('bridge-es')
          .setSubject('bridge-es')
          .setAudience(s.tokenUrl)
          .setExpirationTime(Math.floor(s.clock.now() / 1000) + 60)
          .setJti(randomUUID())
          .sign(new TextEncoder().encode('a-shared-secret-that-is-long-enough-for-hs256')),
    ],
  ];

  it.each(invalidClient)('answers 401 invalid_client to %s', async (_name, reason, build) => {
    const setup = await startSignedIn();
    const res = await requestWith(setup, await build(setup));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(res.body.error_description).toMatch(reason);
    expect(res.body.access_token).toBeUndefined();
  });

  it('answers 401 invalid_client to a reused jti, after the first use succeeded', async () => {
    const setup = await startSignedIn();
    const jti = randomUUID();
    expect((await requestWith(setup, await assertion(setup, { jti }))).status).toBe(200);
    const again = await requestWith(setup, await assertion(setup, { jti }));
    expect(again.status).toBe(401);
    expect(again.body.error).toBe('invalid_client');
  });

  it('answers 400 unsupported_grant_type to a grant other than client_credentials', async () => {
    const setup = await startSignedIn();
    const res = await requestWith(setup, await assertion(setup), 'system/*.cruds', 'authorization_code');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unsupported_grant_type');
  });

  it('answers 400 invalid_request when a field is missing', async () => {
    const setup = await startSignedIn();
    const res = await tokenRequest(setup, { grant_type: 'client_credentials', scope: 'system/*.cruds', client_assertion_type: JWT_BEARER });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('answers 400 invalid_scope to a scope the client may not have', async () => {
    const setup = await startSignedIn({ scopes: ['system/Patient.rs'] });
    const res = await requestWith(setup, await assertion(setup), 'system/Patient.cruds');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
    expect((await requestWith(setup, await assertion(setup), 'system/Patient.rs')).status).toBe(200);
  });
});

describe('bundled FHIR server without conditional create', () => {
  it('makes a new resource for each POST with the same If-None-Exist and says so in metadata', async () => {
    const server = await startFhirServer({ logger: silentLogger(), conditionalCreate: false });
    servers.push(server);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${server.baseUrl}/Patient`, {
        method: 'POST',
        headers: { 'content-type': 'application/fhir+json', 'if-none-exist': 'identifier=urn:test|pat_1' },
        body: JSON.stringify(patient),
      });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    expect(new Set(ids).size).toBe(2);
    const cs = (await (await fetch(`${server.baseUrl}/metadata`)).json()) as { rest: { resource: { conditionalCreate: boolean }[]; security?: unknown }[] };
    expect(cs.rest[0]!.resource.every((r) => r.conditionalCreate === false)).toBe(true);
    expect(cs.rest[0]!.security).toBeUndefined();
  });
});
