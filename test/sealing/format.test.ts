// Telling a sealed value from a clear one without a key, and reading its key id: every sealed value starts
// with the same prefix, which no clear value the adapter stores (JSON, HL7 v2, PDF, JPEG, PNG) starts with.
import { describe, expect, it } from 'vitest';
import { SealedValueInvalidError } from '../../src/sealing/errors.ts';
import { isSealed, keyIdOf, SEALED_PREFIX } from '../../src/sealing/format.ts';
import { createSealer } from '../../src/sealing/sealer.ts';
import { keySetOf } from './builders.ts';

const sealedWith = async (kid: string) => createSealer(await keySetOf(kid)).seal('{"eventId":"evt-1"}', 'inbox_events/body/evt-1');

describe('isSealed', () => {
  it('knows a sealed value as text and as the bytes of that text', async () => {
    const sealed = await sealedWith('k-1');
    expect(sealed.startsWith(SEALED_PREFIX)).toBe(true);
    expect(isSealed(sealed)).toBe(true);
    expect(isSealed(Buffer.from(sealed, 'latin1'))).toBe(true);
    expect(isSealed(new Uint8Array(Buffer.from(`xx${sealed}`, 'latin1')).subarray(2))).toBe(true);
  });

  it.each([
    ['a JSON body', '{"eventId":"evt-1"}'],
    ['an HL7 v2 message', 'MSH|^~\\&|EMR|HOSPITAL|||20261125||ADT^A28|1|P|2.5.1'],
    ['a PDF', '%PDF-1.7'],
    ['an empty value', ''],
    ['a JWT', 'eyJhbGciOiJFUzM4NCIsInR5cCI6IkpXVCJ9.e30.sig'],
  ])('knows %s for a clear value', (_what, value) => {
    expect(isSealed(value)).toBe(false);
    expect(isSealed(Buffer.from(value))).toBe(false);
  });

  it('knows JPEG and PNG bytes for clear values', () => {
    expect(isSealed(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]))).toBe(false);
    expect(isSealed(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(false);
  });

  it('takes a value cut short inside the prefix for a damaged sealed value, not a clear one', () => {
    expect(isSealed(SEALED_PREFIX.slice(0, 20))).toBe(true);
    expect(isSealed(Buffer.from(SEALED_PREFIX.slice(0, 8)))).toBe(true);
    expect(isSealed(SEALED_PREFIX.slice(0, 7))).toBe(false);
  });
});

describe('keyIdOf', () => {
  it('reads the kid of a sealed value without its key, and none of a clear value', async () => {
    expect(keyIdOf(await sealedWith('k-20261125-abc123'))).toBe('k-20261125-abc123');
    expect(keyIdOf('{"eventId":"evt-1"}')).toBeUndefined();
  });

  it('refuses a sealed value whose header is damaged', async () => {
    expect(() => keyIdOf(`${SEALED_PREFIX}AAAA..x.y.z`)).toThrow(SealedValueInvalidError);
    const truncated = (await sealedWith('k-1')).slice(0, 60);
    expect(() => keyIdOf(truncated)).toThrow(SealedValueInvalidError);
  });
});
