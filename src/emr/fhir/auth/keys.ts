// The adapter's key for SMART Backend Services: loaded from a PKCS#8 PEM or a private JWK, its signing
// algorithm chosen by its type (RSA of 2048 bits or more: RS384; EC P-384: ES384), its public JWKS and
// RFC 7638 thumbprint derived with jose. Also makes new keys (`emr-bridge keys generate`).
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, type JWK } from 'jose';

export const CLIENT_KEY_ALGS = ['ES384', 'RS384'] as const;
export type ClientKeyAlg = (typeof CLIENT_KEY_ALGS)[number];

export interface ClientKey {
  alg: ClientKeyAlg;
  /** The assertion header's kid: FHIR_KEY_ID, or the thumbprint of the public key. */
  kid: string;
  privateKey: KeyObject;
  /** The public half as a JWK with kid, alg and use, ready to register with an EMR. */
  publicJwk: JWK;
}

/** A key that cannot be used; the message names the file, never its contents. */
export class ClientKeyError extends Error {
  override name = 'ClientKeyError';
}

function algorithmOf(key: KeyObject, path: string): ClientKeyAlg {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') {
    if ((details.modulusLength ?? 0) < 2048) throw new ClientKeyError(`${path}: an RSA key must have at least 2048 bits`);
    return 'RS384';
  }
  if (key.asymmetricKeyType === 'ec' && details.namedCurve === 'secp384r1') return 'ES384';
  throw new ClientKeyError(`${path}: the key must be RSA (2048 bits or more) or EC P-384`);
}

function parsePrivateKey(text: string, path: string): KeyObject {
  try {
    const trimmed = text.trim();
    if (trimmed.startsWith('{')) return createPrivateKey({ key: JSON.parse(trimmed) as JWK & { kty: string }, format: 'jwk' });
    return createPrivateKey({ key: trimmed, format: 'pem' });
  } catch {
    throw new ClientKeyError(`${path}: not a private key (PKCS#8 PEM or a private JWK)`);
  }
}

export async function publicJwkOf(publicKey: KeyObject, alg: ClientKeyAlg, kid?: string): Promise<JWK> {
  const jwk = await exportJWK(publicKey);
  return { ...jwk, kid: kid ?? (await calculateJwkThumbprint(jwk, 'sha256')), alg, use: 'sig' };
}

/** Reads and checks the private key at `path`. */
export async function loadClientKey(path: string, keyId?: string): Promise<ClientKey> {
  if (!existsSync(path)) throw new ClientKeyError(`${path}: no such file`);
  const privateKey = parsePrivateKey(readFileSync(path, 'utf8'), path);
  if (privateKey.type !== 'private') throw new ClientKeyError(`${path}: holds a public key, not a private one`);
  const alg = algorithmOf(privateKey, path);
  const publicJwk = await publicJwkOf(createPublicKey(privateKey), alg, keyId);
  return { alg, kid: publicJwk.kid!, privateKey, publicJwk };
}

/** A new key pair: the private key as PKCS#8 PEM and the public JWK (kid = thumbprint). */
export async function generateClientKey(alg: ClientKeyAlg): Promise<{ privatePem: string; publicJwk: JWK }> {
  const pair = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS384' ? { modulusLength: 3072 } : {}) });
  const privatePem = await exportPKCS8(pair.privateKey);
  const publicJwk = await publicJwkOf(createPublicKey(privatePem), alg);
  return { privatePem, publicJwk };
}

/** Writes a private key readable by its owner only (0600), creating the folder; refuses to overwrite. */
export function writePrivateKey(path: string, pem: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, pem, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
}

/** The key at `path`, made first when there is none (zero-configuration mode). */
export async function ensureClientKey(path: string, alg: ClientKeyAlg = 'ES384'): Promise<ClientKey> {
  if (!existsSync(path)) {
    const { privatePem } = await generateClientKey(alg);
    try {
      writePrivateKey(path, privatePem);
    } catch (err) {
      // Another start made it first (writePrivateKey never overwrites): that key stands.
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
    }
  }
  return loadClientKey(path);
}

export const jwksOf = (...keys: JWK[]): { keys: JWK[] } => ({ keys });
