// The sealed value's form, readable without a key: a compact JWE (RFC 7516) with `alg: dir`, `enc: A256GCM`
// and the protected header `{"alg":"dir","enc":"A256GCM","kid":…,"ctx":…}` in that order, so every sealed
// value starts with the same 48 characters (SEALED_PREFIX, the base64url of `{"alg":"dir","enc":"A256GCM","kid":"`).
// That prefix is how a sealed value is told from a clear one (a row written before sealing, or with
// DATA_ENCRYPTION=off): a JSON body starts with `{`, an HL7 message with `MSH|`, a PDF with `%PDF`, none
// with it. Anything that starts with it is sealed, and opens or is an error, never read as clear; so is a
// value cut short inside it (8 characters or more of it), which can only be a truncated sealed value.
import { SealedValueInvalidError } from './errors.ts';
import { KEY_ID } from './keys.ts';

export const SEALED_PREFIX = Buffer.from('{"alg":"dir","enc":"A256GCM","kid":"').toString('base64url');

/** What a sealed value's protected header says (not yet authenticated until it opens). */
export interface SealedHeader {
  kid: string;
  /** The row it was sealed for. */
  ctx: string;
}

/** A sealed value read apart: its header's claims and its four base64url parts (the encrypted key is empty). */
export interface SealedParts extends SealedHeader {
  header: string;
  iv: string;
  ciphertext: string;
  tag: string;
}

/** The shortest start of the prefix taken for a truncated sealed value (`eyJhbGci`: `{"alg`). */
const SHORTEST_CUT = 8;

/**
 * True when `value` is a sealed value, whole or damaged (as text, or as the bytes of that text): it starts with
 * SEALED_PREFIX, or is 8 or more of its first characters. False for a clear value.
 */
export function isSealed(value: string | Uint8Array): boolean {
  const start =
    typeof value === 'string'
      ? value.slice(0, SEALED_PREFIX.length)
      : Buffer.from(value.buffer, value.byteOffset, Math.min(value.byteLength, SEALED_PREFIX.length)).toString('latin1');
  if (start.length === SEALED_PREFIX.length) return start === SEALED_PREFIX;
  // Shorter than the prefix, so the whole value: a cut-short start of it is a truncated sealed value.
  return start.length >= SHORTEST_CUT && SEALED_PREFIX.startsWith(start);
}

/** A sealed value as text, or undefined for a clear value. */
export function sealedText(value: string | Uint8Array): string | undefined {
  if (!isSealed(value)) return undefined;
  return typeof value === 'string' ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('latin1');
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The header of a sealed value, after checking its shape: five parts, the second empty (`dir` wraps no key),
 * a 96-bit IV and a 128-bit tag. Throws SealedValueInvalidError (malformed) naming `context` when given.
 */
export function headerOf(sealed: string, context?: string): SealedParts {
  const malformed = () => new SealedValueInvalidError('malformed', context);
  const parts = sealed.split('.');
  if (parts.length !== 5) throw malformed();
  const [header, key, iv, ciphertext, tag] = parts as [string, string, string, string, string];
  if (key !== '' || iv.length !== 16 || tag.length !== 22 || !B64URL.test(header) || !B64URL.test(iv) || !B64URL.test(tag)) throw malformed();
  // The ciphertext's characters are not checked here (a pass over the whole value, the longest part): a
  // character out of base64url decodes to other bytes, which then fail authentication (altered).
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  const { alg, enc, kid, ctx } = (parsed ?? {}) as Record<string, unknown>;
  if (alg !== 'dir' || enc !== 'A256GCM' || typeof kid !== 'string' || !KEY_ID.test(kid) || typeof ctx !== 'string') throw malformed();
  return { kid, ctx, header, iv, ciphertext, tag };
}

/**
 * The id of the key a value is sealed under, read without the key; undefined for a clear value. Throws
 * SealedValueInvalidError for a sealed value whose header is damaged.
 */
export function keyIdOf(value: string | Uint8Array): string | undefined {
  const sealed = sealedText(value);
  return sealed === undefined ? undefined : headerOf(sealed).kid;
}
