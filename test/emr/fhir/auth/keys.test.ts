// The adapter's SMART client key: which keys loadClientKey accepts (and the algorithm each gets), which it
// refuses, the kid, ensureClientKey's file, and the JWKS route serving only the public half.
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, createLocalJWKSet, jwtVerify, SignJWT, type JWK } from 'jose';
import Koa from 'koa';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createJwksRouter } from '../../../../src/emr/fhir/auth/jwks-router.ts';
import { ClientKeyError, ensureClientKey, loadClientKey, type ClientKey } from '../../../../src/emr/fhir/auth/keys.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function write(text: string, name = `key-${++files}.pem`): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

const ecPair = (namedCurve = 'secp384r1') => generateKeyPairSync('ec', { namedCurve });
const rsaPair = (modulusLength = 2048) => generateKeyPairSync('rsa', { modulusLength });
const pkcs8 = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }).toString();

/** Signs a JWT with the loaded private key and verifies it against its public JWK alone. */
async function signsVerifiably(key: ClientKey): Promise<boolean> {
  const jwt = await new SignJWT({ probe: 1 }).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.privateKey);
  const { payload } = await jwtVerify(jwt, createLocalJWKSet({ keys: [key.publicJwk] }), { algorithms: [key.alg] });
  return payload.probe === 1;
}

async function refusal(path: string): Promise<ClientKeyError> {
  const err = await loadClientKey(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ClientKeyError);
  expect((err as Error).message).toContain(path);
  return err as ClientKeyError;
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

describe('loadClientKey', () => {
  it('loads a PKCS#8 PEM of an EC P-384 key as ES384', async () => {
    const key = await loadClientKey(write(pkcs8(ecPair().privateKey)));
    expect(key.alg).toBe('ES384');
    expect(key.publicJwk).toMatchObject({ kty: 'EC', crv: 'P-384', alg: 'ES384', use: 'sig' });
    expect(await signsVerifiably(key)).toBe(true);
  });

  it('loads a PKCS#8 PEM of an RSA 2048 key as RS384', async () => {
    const key = await loadClientKey(write(pkcs8(rsaPair().privateKey)));
    expect(key.alg).toBe('RS384');
    expect(key.publicJwk).toMatchObject({ kty: 'RSA', alg: 'RS384', use: 'sig' });
    expect(await signsVerifiably(key)).toBe(true);
  });

  it('loads a private JWK (JSON) as the same key its PEM is', async () => {
    const { privateKey } = ecPair();
    const fromJwk = await loadClientKey(write(JSON.stringify(privateKey.export({ format: 'jwk' })), 'private.jwk.json'));
    const fromPem = await loadClientKey(write(pkcs8(privateKey)));
    expect(fromJwk.alg).toBe('ES384');
    expect(fromJwk.kid).toBe(fromPem.kid);
    expect(fromJwk.publicJwk).toEqual(fromPem.publicJwk);
    expect(await signsVerifiably(fromJwk)).toBe(true);
  });

  it('refuses an RSA key of 1024 bits', async () => {
    const err = await refusal(write(pkcs8(rsaPair(1024).privateKey)));
    expect(err.message).toContain('2048');
  });

  it('refuses an EC P-256 key', async () => {
    const err = await refusal(write(pkcs8(ecPair('prime256v1').privateKey)));
    expect(err.message).toContain('P-384');
  });

  it('refuses a public key in a PEM', async () => {
    const { publicKey } = ecPair();
    await refusal(write(publicKey.export({ type: 'spki', format: 'pem' }).toString()));
  });

  it('refuses a public JWK', async () => {
    const { publicKey } = ecPair();
    await refusal(write(JSON.stringify(publicKey.export({ format: 'jwk' })), 'public.jwk.json'));
  });

  it('refuses a missing file, naming the path', async () => {
    const err = await refusal(join(dir, 'no-such-key.pem'));
    expect(err.message).toContain('no such file');
  });

  it("does not put the key's contents in a refusal", async () => {
    const pem = pkcs8(ecPair('prime256v1').privateKey);
    const err = await refusal(write(pem));
    expect(err.message).not.toContain(pem.split('\n')[1]!);
  });

  it('uses FHIR_KEY_ID, when given, as the kid', async () => {
    const key = await loadClientKey(write(pkcs8(ecPair().privateKey)), 'hospital-assigned-kid-7');
    expect(key.kid).toBe('hospital-assigned-kid-7');
    expect(key.publicJwk.kid).toBe('hospital-assigned-kid-7');
  });

  it('defaults the kid to the RFC 7638 SHA-256 thumbprint of the public key', async () => {
    for (const { privateKey } of [ecPair(), rsaPair()]) {
      const key = await loadClientKey(write(pkcs8(privateKey)));
      const expected = await calculateJwkThumbprint(createPublicKey(privateKey).export({ format: 'jwk' }) as JWK, 'sha256');
      expect(key.kid).toBe(expected);
      expect(key.publicJwk.kid).toBe(expected);
    }
  });

  it('never puts a private member in the public JWK', async () => {
    const key = await loadClientKey(write(pkcs8(rsaPair().privateKey)));
    for (const member of PRIVATE_MEMBERS) expect(key.publicJwk).not.toHaveProperty(member);
  });
});

describe('ensureClientKey', () => {
  it('makes a key file of mode 0600 once, and reuses it afterwards', async () => {
    const path = join(dir, 'nested', 'fhir-client-key.pem');
    const made = await ensureClientKey(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(made.alg).toBe('ES384');
    const contents = readFileSync(path, 'utf8');
    const again = await ensureClientKey(path);
    expect(readFileSync(path, 'utf8')).toBe(contents);
    expect(again.kid).toBe(made.kid);
    expect(await signsVerifiably(again)).toBe(true);
  });

  it('makes an RSA key when asked for RS384', async () => {
    const path = join(dir, 'rsa', 'fhir-client-key.pem');
    const made = await ensureClientKey(path, 'RS384');
    expect(made.alg).toBe('RS384');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});

describe('createJwksRouter', () => {
  it('serves the public JWK at /.well-known/jwks.json and no private member', async () => {
    const key = await loadClientKey(write(pkcs8(rsaPair().privateKey)));
    const app = new Koa();
    app.use(createJwksRouter(key.publicJwk).routes());
    const res = await request(app.callback()).get('/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    const body = res.body as { keys: JWK[] };
    expect(body.keys).toHaveLength(1);
    expect(body.keys[0]).toEqual(key.publicJwk);
    for (const member of PRIVATE_MEMBERS) expect(body.keys[0]).not.toHaveProperty(member);
    expect(res.text).not.toContain('"d"');
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: key.alg, kid: key.kid }).sign(key.privateKey);
    await expect(jwtVerify(jwt, createLocalJWKSet(body))).resolves.toBeTruthy();
  });
});
