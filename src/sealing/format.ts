// The sealed value's form, readable without a key: JWE (RFC 7516) with `alg: dir`, `enc: A256GCM` and the
// protected header `{"alg":"dir","enc":"A256GCM","kid":…,"ctx":…}` in that order, so every sealed value starts
// with the same 48 characters (SEALED_PREFIX, the base64url of `{"alg":"dir","enc":"A256GCM","kid":"`).
// It is stored in one of two serializations of the same parts, told apart by what follows the header:
//   - compact (`header..iv.ciphertext.tag`, all base64url): RFC 7516's compact JWE, for text columns;
//   - packed (`header.~` then the ciphertext's length, 4 bytes big-endian, the IV, the ciphertext and the tag,
//     as bytes): for bytes columns, a third smaller than compact (base64url writes 4 characters per 3 bytes),
//     which on a webhook body is most of what sealing costs. compactOf turns it into the compact JWE.
// The prefix is how a sealed value is told from a clear one (a row written before sealing, or with
// DATA_ENCRYPTION=off): a JSON body starts with `{`, an HL7 message with `MSH|`, a PDF with `%PDF`, none with
// it. Anything that starts with it is sealed, and opens or is an error, never read as clear; so is a value cut
// short inside it (8 characters or more of it), which can only be a truncated sealed value.
import { SealedValueInvalidError } from './errors.ts';
import { KEY_ID } from './keys.ts';

export const SEALED_PREFIX = Buffer.from('{"alg":"dir","enc":"A256GCM","kid":"').toString('base64url');

/** What a sealed value's protected header says (not yet authenticated until it opens). */
export interface SealedHeader {
  kid: string;
  /** The row it was sealed for. */
  ctx: string;
}

/** A sealed value read apart: its header's claims, the header as written (the associated data) and its parts. */
export interface SealedParts extends SealedHeader {
  header: string;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

export const IV_BYTES = 12;
export const TAG_BYTES = 16;
/** After the header: `.~` marks the packed form (compact has `..` there: `dir` wraps no key). */
const PACKED_MARK = 0x7e;
const DOT = 0x2e;
const LENGTH_BYTES = 4;

/** The shortest start of the prefix taken for a truncated sealed value (`eyJhbGci`: `{"alg`). */
const SHORTEST_CUT = 8;

/** The first `n` characters of a value, as text (bytes read as latin1, one character per byte). */
const startOf = (value: string | Uint8Array, n: number): string =>
  typeof value === 'string' ? value.slice(0, n) : asBuffer(value).toString('latin1', 0, Math.min(value.byteLength, n));

export const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * True when `value` is a sealed value, whole or damaged, in either form (as text, or as bytes): it starts with
 * SEALED_PREFIX, or is 8 or more of its first characters. False for a clear value.
 */
export function isSealed(value: string | Uint8Array): boolean {
  const start = startOf(value, SEALED_PREFIX.length);
  if (start.length === SEALED_PREFIX.length) return start === SEALED_PREFIX;
  // Shorter than the prefix, so the whole value: a cut-short start of it is a truncated sealed value.
  return start.length >= SHORTEST_CUT && SEALED_PREFIX.startsWith(start);
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/** The claims of a protected header (base64url), checked: `dir`, `A256GCM`, a valid kid, a ctx. */
function claimsOf(header: string, malformed: () => Error): SealedHeader {
  if (!B64URL.test(header)) throw malformed();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  const { alg, enc, kid, ctx } = (parsed ?? {}) as Record<string, unknown>;
  if (alg !== 'dir' || enc !== 'A256GCM' || typeof kid !== 'string' || !KEY_ID.test(kid) || typeof ctx !== 'string') throw malformed();
  return { kid, ctx };
}

/** A compact JWE's parts, after checking its shape: five parts, the second empty, a 96-bit IV, a 128-bit tag. */
function compactParts(sealed: string, malformed: () => Error): SealedParts {
  const parts = sealed.split('.');
  if (parts.length !== 5) throw malformed();
  const [header, key, iv, ciphertext, tag] = parts as [string, string, string, string, string];
  if (key !== '' || iv.length !== 16 || tag.length !== 22 || !B64URL.test(iv) || !B64URL.test(tag)) throw malformed();
  // The ciphertext's characters are not checked here (a pass over the whole value, the longest part): a
  // character out of base64url decodes to other bytes, which then fail authentication (altered).
  const claims = claimsOf(header, malformed);
  return { ...claims, header, iv: Buffer.from(iv, 'base64url'), ciphertext: Buffer.from(ciphertext, 'base64url'), tag: Buffer.from(tag, 'base64url') };
}

/** A packed value's parts (`dot` is where its header ends), the views sharing its memory; its length must be exact. */
function packedParts(bytes: Buffer, dot: number, malformed: () => Error): SealedParts {
  const ivAt = dot + 2 + LENGTH_BYTES;
  if (bytes.length < ivAt + IV_BYTES + TAG_BYTES) throw malformed();
  const length = bytes.readUInt32BE(dot + 2);
  const ciphertextAt = ivAt + IV_BYTES;
  if (bytes.length !== ciphertextAt + length + TAG_BYTES) throw malformed();
  const header = bytes.toString('latin1', 0, dot);
  const claims = claimsOf(header, malformed);
  return {
    ...claims,
    header,
    iv: bytes.subarray(ivAt, ciphertextAt),
    ciphertext: bytes.subarray(ciphertextAt, ciphertextAt + length),
    tag: bytes.subarray(ciphertextAt + length),
  };
}

/**
 * The parts of a sealed value in either form, after checking its shape, or undefined for a clear value.
 * Throws SealedValueInvalidError (malformed) naming `context` when given for a sealed value truncated or damaged.
 */
export function sealedParts(value: string | Uint8Array, context?: string): SealedParts | undefined {
  if (!isSealed(value)) return undefined;
  const malformed = () => new SealedValueInvalidError('malformed', context);
  if (typeof value === 'string') {
    const dot = value.indexOf('.');
    if (dot < 0) throw malformed();
    // Bytes read as text (latin1) are the same bytes: a packed value read from a text result still opens.
    return value.charCodeAt(dot + 1) === PACKED_MARK ? packedParts(Buffer.from(value, 'latin1'), dot, malformed) : compactParts(value, malformed);
  }
  const bytes = asBuffer(value);
  const dot = bytes.indexOf(DOT);
  if (dot < 0) throw malformed();
  return bytes[dot + 1] === PACKED_MARK ? packedParts(bytes, dot, malformed) : compactParts(bytes.toString('latin1'), malformed);
}

/** What a sealed value is made of, in either form. */
export type CipherParts = Pick<SealedParts, 'header' | 'iv' | 'ciphertext' | 'tag'>;

/** The packed form of a sealed value's parts. */
export function packed({ header, iv, ciphertext, tag }: CipherParts): Buffer {
  const out = Buffer.allocUnsafe(header.length + 2 + LENGTH_BYTES + iv.length + ciphertext.length + tag.length);
  let at = out.write(header, 0, 'latin1');
  out[at++] = DOT;
  out[at++] = PACKED_MARK;
  at = out.writeUInt32BE(ciphertext.length, at);
  for (const part of [iv, ciphertext, tag]) at += asBuffer(part).copy(out, at);
  return out;
}

/** The compact form of the same parts: `header..iv.ciphertext.tag`. */
export function compact({ header, iv, ciphertext, tag }: CipherParts): string {
  const b64 = (part: Uint8Array) => asBuffer(part).toString('base64url');
  return `${header}..${b64(iv)}.${b64(ciphertext)}.${b64(tag)}`;
}

/**
 * A sealed value, in either form, as RFC 7516's compact JWE: what any JOSE library opens (with the key and
 * the `ctx` check). Throws SealedValueInvalidError for a damaged value and TypeError for a clear one.
 */
export function compactOf(value: string | Uint8Array): string {
  const parts = sealedParts(value);
  if (!parts) throw new TypeError('a clear value has no compact form');
  return compact(parts);
}

/**
 * The id of the key a value is sealed under, read without the key; undefined for a clear value. Throws
 * SealedValueInvalidError for a sealed value whose header is damaged.
 */
export function keyIdOf(value: string | Uint8Array): string | undefined {
  return sealedParts(value)?.kid;
}
