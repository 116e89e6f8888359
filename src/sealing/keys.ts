// The data key file: a JWK Set of named 256-bit keys, `{"keys": [{"kty": "oct", "kid", "alg": "dir", "k"}]}`.
// The first key is current (new values are sealed under it); the others only open values sealed before. This
// file parses and checks one (zod), imports its keys for AES-GCM, and makes new keys. Its messages name a
// key by its kid (or its place in the list), never print key material.
import { createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import { DataKeysError } from './errors.ts';

/** A key id: 1 to 64 letters, digits, `.`, `_`, `:` or `-`, starting with a letter or digit. */
export const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/** A data key as its file holds it. Members other than these are kept as they are. */
export interface DataKeyJwk {
  kty: 'oct';
  kid: string;
  /** The 32 key bytes, base64url without padding (43 characters). */
  k: string;
  alg?: 'dir';
  use?: 'enc';
  [member: string]: unknown;
}

/** A checked key file: at least one key, unique kids; the first is current. */
export interface DataKeyFile {
  keys: [DataKeyJwk, ...DataKeyJwk[]];
}

/** One key, as a secret KeyObject for AES-256-GCM. */
export interface DataKey {
  kid: string;
  key: KeyObject;
}

/** The keys a sealer uses: the current one seals, any of them opens. */
export interface DataKeySet {
  readonly current: DataKey;
  /** Every kid, the current one first. */
  readonly kids: readonly string[];
  get(kid: string): DataKey | undefined;
}

const KEY_BYTES = 32;

const keySchema = z.looseObject({
  kty: z.literal('oct', { error: 'kty must be "oct" (a symmetric key)' }),
  kid: z.string({ error: 'kid is missing' }).regex(KEY_ID, { error: 'kid must be 1 to 64 letters, digits, ".", "_", ":" or "-"' }),
  k: z
    .string({ error: 'k (the key, base64url) is missing' })
    .refine((k) => /^[A-Za-z0-9_-]*$/.test(k) && Buffer.from(k, 'base64url').toString('base64url') === k, {
      error: 'k is not base64url (no padding)',
      abort: true,
    })
    .refine((k) => Buffer.from(k, 'base64url').length === KEY_BYTES, {
      error: (issue) => `k holds ${Buffer.from(String(issue.input), 'base64url').length} bytes; a data key is ${KEY_BYTES} bytes (256 bits)`,
    }),
  alg: z.literal('dir', { error: 'alg must be "dir" (or absent)' }).optional(),
  use: z.literal('enc', { error: 'use must be "enc" (or absent)' }).optional(),
});

const FORMAT = 'a JWK Set: {"keys": [{"kty": "oct", "kid": "…", "k": "<base64url of 32 bytes>"}]}';

/**
 * Parses and checks a key file's text; `source` names where it came from (a setting and path) in the one
 * DataKeysError that lists every problem.
 */
export function parseKeyFile(text: string, source: string): DataKeyFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the text around the fault: key material.
    throw new DataKeysError(`${source}: not JSON; a data key file is ${FORMAT}`);
  }
  const keys = (json as { keys?: unknown } | null)?.keys;
  if (typeof json !== 'object' || json === null || !Array.isArray(keys)) throw new DataKeysError(`${source}: no "keys" list; a data key file is ${FORMAT}`);
  if (keys.length === 0) throw new DataKeysError(`${source}: holds no key; at least one is needed (the first seals new values)`);
  const problems: string[] = [];
  const seen = new Set<string>();
  keys.forEach((raw, i) => {
    const kid = (raw as { kid?: unknown } | null)?.kid;
    const name = typeof kid === 'string' && KEY_ID.test(kid) ? `key ${kid}` : `key #${i + 1}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      problems.push(`${name}: not a JSON object`);
      return;
    }
    const parsed = keySchema.safeParse(raw);
    if (!parsed.success) for (const issue of parsed.error.issues) problems.push(`${name}: ${issue.message}`);
    else if (seen.has(parsed.data.kid)) problems.push(`kid ${parsed.data.kid} appears twice; each key needs its own`);
    else seen.add(parsed.data.kid);
  });
  if (problems.length) throw new DataKeysError(`${source}: ${problems.join('; ')}`);
  return { keys: keys as DataKeyFile['keys'] };
}

/** Imports every key of a checked file for AES-256-GCM. */
export async function importKeySet(file: DataKeyFile): Promise<DataKeySet> {
  const imported = file.keys.map((jwk) => ({ kid: jwk.kid, key: createSecretKey(Buffer.from(jwk.k, 'base64url')) }));
  const byKid = new Map(imported.map((k) => [k.kid, k]));
  return { current: imported[0]!, kids: imported.map((k) => k.kid), get: (kid) => byKid.get(kid) };
}

/** Where new key bytes and kid suffixes come from (tests pass a fixed one). */
export type RandomBytes = (size: number) => Buffer;

/** A new key: 32 random bytes, kid `k-<UTC date of clock>-<6 random hex digits>` (k-20261125-3fa2c1). */
export function newDataKey(clock: Clock, random: RandomBytes = randomBytes): DataKeyJwk {
  const day = new Date(clock.now()).toISOString().slice(0, 10).replaceAll('-', '');
  return { kty: 'oct', kid: `k-${day}-${random(3).toString('hex')}`, alg: 'dir', k: random(KEY_BYTES).toString('base64url') };
}

/** A new key file holding one new key. */
export function generateKeyFile(clock: Clock, random: RandomBytes = randomBytes): DataKeyFile {
  return { keys: [newDataKey(clock, random)] };
}

/** The file with a new key put first (now current); the others kept, in order, to open older values. */
export function withNewCurrentKey(file: DataKeyFile, clock: Clock, random: RandomBytes = randomBytes): DataKeyFile {
  const kids = new Set(file.keys.map((k) => k.kid));
  for (let attempt = 0; attempt < 100; attempt++) {
    const key = newDataKey(clock, random);
    if (!kids.has(key.kid)) return { keys: [key, ...file.keys] };
  }
  throw new Error('no free kid for the new key after 100 attempts');
}

/** A key file's text, one key a line. */
export function formatKeyFile(file: DataKeyFile): string {
  return `{"keys": [\n${file.keys.map((k) => `  ${JSON.stringify(k)}`).join(',\n')}\n]}\n`;
}
