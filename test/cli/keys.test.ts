// `emr-bridge keys generate`: the private key written once with mode 0600, the printed JWKS verifying what
// that key signs, RS384 on request, and the refusals (an existing file, an unknown algorithm); `keys --help`.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, importPKCS8, jwtVerify, SignJWT, type JWK } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-keys-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const keys = (args: string[]) => runCli(['keys', ...args], {});

/** The JWKS printed on standard output (runCli gives standard output first, then standard error). */
function printedJwks(out: string): { keys: JWK[] } {
  return JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)) as { keys: JWK[] };
}

/** Signs with the written private key and verifies against the printed JWKS alone. */
async function verifiesWith(pem: string, jwks: { keys: JWK[] }, alg: 'ES384' | 'RS384'): Promise<string | undefined> {
  const kid = jwks.keys[0]!.kid!;
  const jwt = await new SignJWT({ sub: 'probe' }).setProtectedHeader({ alg, kid, typ: 'JWT' }).sign(await importPKCS8(pem, alg));
  const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks), { algorithms: [alg] });
  return payload.sub;
}

describe('emr-bridge keys', () => {
  it('writes an ES384 private key with mode 0600 and prints a JWKS that verifies what it signs', async () => {
    const out = join(dir, 'k.pem');
    const res = await keys(['generate', '--out', out]);
    expect(res.code, res.out).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const jwks = printedJwks(res.out);
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-384', alg: 'ES384', use: 'sig' });
    expect(jwks.keys[0]).not.toHaveProperty('d');
    const pem = readFileSync(out, 'utf8');
    expect(pem).toContain('BEGIN PRIVATE KEY');
    expect(await verifiesWith(pem, jwks, 'ES384')).toBe('probe');
  }, 30_000);

  it('makes an RSA key with --alg RS384', async () => {
    const out = join(dir, 'rsa.pem');
    const res = await keys(['generate', '--alg', 'RS384', '--out', out]);
    expect(res.code, res.out).toBe(0);
    const jwks = printedJwks(res.out);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS384' });
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(jwks.keys[0]).not.toHaveProperty(member);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(await verifiesWith(readFileSync(out, 'utf8'), jwks, 'RS384')).toBe('probe');
  }, 30_000);

  it('exits 2 and leaves the file as it was when --out already exists', async () => {
    const out = join(dir, 'once.pem');
    const first = await keys(['generate', '--out', out]);
    expect(first.code, first.out).toBe(0);
    const before = readFileSync(out, 'utf8');
    const second = await keys(['generate', '--out', out]);
    expect(second.code).toBe(2);
    expect(second.out).toContain('exists');
    expect(readFileSync(out, 'utf8')).toBe(before);
  }, 30_000);

  it('exits 2 for --alg HS256 and writes nothing', async () => {
    const out = join(dir, 'hs.pem');
    const res = await keys(['generate', '--alg', 'HS256', '--out', out]);
    expect(res.code).toBe(2);
    expect(res.out).toContain('--alg');
    expect(existsSync(out)).toBe(false);
  }, 30_000);

  it('prints its usage with --help, naming --alg and --out', async () => {
    const res = await keys(['--help']);
    expect(res.code).toBe(0);
    expect(res.out).toContain('keys generate');
    expect(res.out).toContain('--alg');
    expect(res.out).toContain('--out');
  }, 30_000);
});
