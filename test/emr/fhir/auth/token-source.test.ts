// The SMART token source against a stand-in token endpoint that verifies every assertion itself: token
// reuse and one shared request, renewal before expiry, renew(), what each assertion and form holds, discovery, and failures.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../../../../src/clock.ts';
import { EmrError } from '../../../../src/emr/errors.ts';
import { loadClientKey, type ClientKey } from '../../../../src/emr/fhir/auth/keys.ts';
import { createTokenSource, renewalMarginMs, type TokenSource } from '../../../../src/emr/fhir/auth/token-source.ts';
import { startTokenEndpoint, type TokenEndpointStub } from '../../../support/token-endpoint.ts';

const CLIENT_ID = 'emr-bridge-test';
const SCOPES = ['system/Patient.crus', 'system/DocumentReference.rs', 'system/Binary.r'];
const LIFETIME_SECONDS = 60;

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-token-source-'));

interface TestKey {
  pem: string;
  /** The public JWK built with node:crypto and the RFC 7638 thumbprint, not by the code under test. */
  jwk: JWK;
  key: ClientKey;
}

async function makeKey(type: 'ec' | 'rsa'): Promise<TestKey> {
  const pair = type === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'secp384r1' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const path = join(dir, `${type}-key.pem`);
  writeFileSync(path, pem, { mode: 0o600 });
  const raw = createPublicKey(pem).export({ format: 'jwk' }) as JWK;
  const jwk = { ...raw, kid: await calculateJwkThumbprint(raw, 'sha256') };
  return { pem, jwk, key: await loadClientKey(path) };
}

let ec: TestKey;
let rsa: TestKey;
beforeAll(async () => {
  ec = await makeKey('ec');
  rsa = await makeKey('rsa');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Setup {
  stub: TokenEndpointStub;
  clock: ManualClock;
  tokens: TokenSource;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(o: { key?: TestKey; registered?: TestKey; discover?: boolean; scopes?: string[] } = {}): Promise<Setup> {
  const key = o.key ?? ec;
  const clock = createManualClock();
  const stub = await startTokenEndpoint({ clientId: CLIENT_ID, publicJwk: (o.registered ?? key).jwk, clock, lifetimeSeconds: LIFETIME_SECONDS });
  const dispatcher = new Agent();
  cleanups.push(
    () => stub.close(),
    () => dispatcher.close(),
  );
  const tokens = createTokenSource({
    fhirBaseUrl: stub.baseUrl,
    ...(o.discover ? {} : { tokenUrl: stub.tokenUrl }),
    clientId: CLIENT_ID,
    key: key.key,
    scopes: o.scopes ?? SCOPES,
    clock,
    dispatcher,
  });
  return { stub, clock, tokens };
}

async function failure(p: Promise<unknown>): Promise<EmrError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EmrError);
  return err as EmrError;
}

describe('token reuse', () => {
  it('reuses one token for many calls, with one token request', async () => {
    const { stub, clock, tokens } = await setup();
    const first = await tokens.token();
    for (let i = 0; i < 10; i++) {
      clock.advance(1_000);
      expect(await tokens.token()).toBe(first);
    }
    expect(stub.seen).toHaveLength(1);
    expect(tokens.requests()).toBe(1);
  });

  it('lets 20 concurrent callers share one token request', async () => {
    const { stub, tokens } = await setup();
    const got = await Promise.all(Array.from({ length: 20 }, () => tokens.token()));
    expect(new Set(got).size).toBe(1);
    expect(got[0]).toBe(stub.seen[0]!.issued);
    expect(stub.seen).toHaveLength(1);
    expect(tokens.requests()).toBe(1);
  });

  it('renews before the token expires: the same token just before the renewal point, a new one just after', async () => {
    const { stub, clock, tokens } = await setup();
    const renewAfterMs = LIFETIME_SECONDS * 1000 - renewalMarginMs(LIFETIME_SECONDS);
    expect(renewAfterMs).toBeLessThan(LIFETIME_SECONDS * 1000);
    const first = await tokens.token();
    clock.advance(renewAfterMs - 1);
    expect(await tokens.token()).toBe(first);
    expect(stub.seen).toHaveLength(1);
    clock.advance(2);
    const second = await tokens.token();
    expect(second).not.toBe(first);
    expect(second).toBe(stub.seen[1]!.issued);
    expect(stub.seen).toHaveLength(2);
  });

  it('renew(rejected) gets a new token; renew() of a token already replaced makes no request', async () => {
    const { stub, tokens } = await setup();
    const first = await tokens.token();
    const second = await tokens.renew(first);
    expect(second).not.toBe(first);
    expect(stub.seen).toHaveLength(2);
    expect(await tokens.renew(first)).toBe(second);
    expect(await tokens.token()).toBe(second);
    expect(stub.seen).toHaveLength(2);
    expect(tokens.requests()).toBe(2);
  });

  it('lets concurrent renewals of one rejected token share one request', async () => {
    const { stub, tokens } = await setup();
    const first = await tokens.token();
    const renewed = await Promise.all(Array.from({ length: 5 }, () => tokens.renew(first)));
    expect(new Set(renewed).size).toBe(1);
    expect(renewed[0]).not.toBe(first);
    expect(stub.seen).toHaveLength(2);
  });
});

describe('the client assertion and the token request', () => {
  it('signs ES384 with kid = the JWK thumbprint and typ JWT, verified by the endpoint against the public JWK', async () => {
    const { stub, tokens } = await setup();
    await tokens.token();
    const seen = stub.seen[0]!;
    expect(seen.refused).toBeUndefined();
    expect(seen.header).toEqual({ alg: 'ES384', kid: ec.jwk.kid, typ: 'JWT' });
  });

  it('signs RS384 with an RSA key loaded from a PEM', async () => {
    const { stub, tokens } = await setup({ key: rsa });
    expect(rsa.key.alg).toBe('RS384');
    const token = await tokens.token();
    const seen = stub.seen[0]!;
    expect(seen.refused).toBeUndefined();
    expect(seen.header).toEqual({ alg: 'RS384', kid: rsa.jwk.kid, typ: 'JWT' });
    expect(token).toBe(seen.issued);
  });

  it('claims iss = sub = client id, aud = the token URL, a lifetime of at most 300 s from now, and a fresh jti each request', async () => {
    const { stub, clock, tokens } = await setup();
    const first = await tokens.token();
    const second = await tokens.renew(first);
    clock.advance(LIFETIME_SECONDS * 1000);
    await tokens.token();
    expect(stub.seen).toHaveLength(3);
    const nowSeconds = Math.floor(clock.now() / 1000);
    for (const { claims, refused } of stub.seen) {
      expect(refused).toBeUndefined();
      expect(claims).toMatchObject({ iss: CLIENT_ID, sub: CLIENT_ID, aud: stub.tokenUrl });
      expect(claims!.exp! - claims!.iat!).toBeLessThanOrEqual(300);
      expect(claims!.exp!).toBeGreaterThan(claims!.iat!);
    }
    expect(stub.seen[2]!.claims!.exp!).toBeGreaterThan(nowSeconds);
    expect(stub.seen[2]!.claims!.iat!).toBeLessThanOrEqual(nowSeconds);
    const jtis = stub.seen.map((s) => s.claims!.jti);
    expect(jtis.every((j) => typeof j === 'string' && j.length > 0)).toBe(true);
    expect(new Set(jtis).size).toBe(3);
    expect(second).not.toBe(first);
  });

  it('posts grant_type client_credentials, the jwt-bearer assertion type and the configured scopes', async () => {
    const scopes = ['system/Patient.rs', 'system/Communication.cu'];
    const { stub, tokens } = await setup({ scopes });
    await tokens.token();
    const { form } = stub.seen[0]!;
    expect(form.grant_type).toBe('client_credentials');
    expect(form.client_assertion_type).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    expect(form.scope).toBe('system/Patient.rs system/Communication.cu');
    expect(form.client_assertion!.split('.')).toHaveLength(3);
  });

  it('finds the token endpoint in {base}/.well-known/smart-configuration when no token URL is given', async () => {
    const { stub, clock, tokens } = await setup({ discover: true });
    const first = await tokens.token();
    expect(stub.discoveries()).toBe(1);
    expect(stub.seen).toHaveLength(1);
    expect(stub.seen[0]!.claims!.aud).toBe(stub.tokenUrl);
    expect(first).toBe(stub.seen[0]!.issued);
    clock.advance(LIFETIME_SECONDS * 1000);
    await tokens.token();
    expect(stub.seen).toHaveLength(2);
    expect(stub.discoveries()).toBe(1);
  });
});

describe('failures', () => {
  it('is refused as invalid_client when the endpoint holds another key than the one it signs with', async () => {
    const { stub, tokens } = await setup({ key: ec, registered: rsa });
    const err = await failure(tokens.token());
    expect(err.code).toBe('emr_unauthorized');
    expect(err.message).toContain('invalid_client');
    expect(stub.seen[0]!.refused).toBeDefined();
    expect(stub.seen[0]!.issued).toBeUndefined();
  });

  it.each([
    [401, 'invalid_client'],
    [400, 'invalid_scope'],
  ])('turns a %i {"error":"%s"} into an emr_unauthorized incident naming the error', async (status, error) => {
    const { stub, tokens } = await setup();
    stub.failWith(status, { error, error_description: 'refused by the test' });
    const err = await failure(tokens.token());
    expect(err.code).toBe('emr_unauthorized');
    expect(err.incident).toBe(true);
    expect(err.retryable).toBe(true);
    expect(err.httpStatus).toBe(status);
    expect(err.message).toContain(error);
    expect(stub.seen[0]!.refused).toBeUndefined();
  });

  it('turns a 503 into emr_unavailable (retryable, not an incident), then gets a token once the endpoint answers', async () => {
    const { stub, tokens } = await setup();
    stub.failWith(503, { error: 'temporarily_unavailable' });
    const err = await failure(tokens.token());
    expect(err.code).toBe('emr_unavailable');
    expect(err.retryable).toBe(true);
    expect(err.incident).toBe(false);
    stub.recover();
    const token = await tokens.token();
    expect(token).toBe(stub.seen[1]!.issued);
    expect(tokens.requests()).toBe(2);
  });

  it('turns a closed port into emr_unavailable, then gets a token once the endpoint is back', async () => {
    const { stub, tokens } = await setup();
    await stub.stop();
    const err = await failure(tokens.token());
    expect(err.code).toBe('emr_unavailable');
    expect(err.retryable).toBe(true);
    expect(err.incident).toBe(false);
    expect(stub.seen).toHaveLength(0);
    await stub.restart();
    const token = await tokens.token();
    expect(token).toBe(stub.seen[0]!.issued);
  });
});
