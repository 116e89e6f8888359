// The charset rule (MSH-18 decides how a frame's bytes are read) and reading an MLLP address.
import { describe, expect, it } from 'vitest';
import { declaredCharset, decodeFrame, encodingOf } from '../../../../src/emr/hl7v2/mllp/charset.ts';
import { parseMllpUrl } from '../../../../src/emr/hl7v2/mllp/endpoint.ts';
import { Hl7CharsetError } from '../../../../src/emr/hl7v2/mllp/errors.ts';
import { adt } from './support/peers.ts';

describe('decodeFrame', () => {
  it('reads a message declaring 8859/1 as ISO-8859-1', () => {
    const bytes = Buffer.from(adt('C1', { charset: '8859/1', name: 'Müller^Zoë' }), 'latin1');
    expect(bytes.includes(0xfc)).toBe(true);
    expect(decodeFrame(bytes)).toContain('|Müller^Zoë');
  });

  it('reads a message declaring UNICODE UTF-8, or nothing, as UTF-8', () => {
    for (const charset of ['UNICODE UTF-8', undefined, '', 'ASCII']) {
      const text = adt('C2', { name: 'Müller^Zoë', ...(charset === undefined ? {} : { charset }) });
      expect(decodeFrame(Buffer.from(text, 'utf8'))).toBe(text);
    }
  });

  it('takes the first repetition of MSH-18, whatever its case and spacing', () => {
    expect(declaredCharset(adt('C3', { charset: ' 8859/1 ~UNICODE UTF-8' }))).toBe('8859/1');
    expect(declaredCharset(adt('C3', { charset: 'unicode utf-8' }))).toBe('UNICODE UTF-8');
    expect(declaredCharset(adt('C3'))).toBe('');
    expect(encodingOf(adt('C3', { charset: '8859/1' }))).toBe('latin1');
  });

  it('refuses a character set it does not read rather than guessing', () => {
    const bytes = Buffer.from(adt('C4', { charset: 'ISO IR87' }), 'latin1');
    expect(() => decodeFrame(bytes)).toThrow(Hl7CharsetError);
    expect(() => decodeFrame(bytes)).toThrow(expect.objectContaining({ declared: 'ISO IR87' }));
  });

  it('refuses bytes that are not UTF-8 in a message that declares no character set (no U+FFFD in a name)', () => {
    const bytes = Buffer.from(adt('C5', { name: 'Müller^Zoë' }), 'latin1');
    expect(() => decodeFrame(bytes)).toThrow(Hl7CharsetError);
  });
});

describe('parseMllpUrl', () => {
  it('reads mllp:// as plain TCP and mllps:// as TLS', () => {
    expect(parseMllpUrl('mllp://emr.example:6661')).toEqual({ secure: false, host: 'emr.example', port: 6661, label: 'emr.example:6661' });
    expect(parseMllpUrl('mllps://10.0.0.5:6662')).toEqual({ secure: true, host: '10.0.0.5', port: 6662, label: '10.0.0.5:6662' });
    expect(parseMllpUrl('mllp://[::1]:7000')).toEqual({ secure: false, host: '::1', port: 7000, label: '[::1]:7000' });
  });

  it('defaults to port 2575 and refuses other schemes and paths', () => {
    expect(parseMllpUrl('mllp://emr.example').port).toBe(2575);
    expect(() => parseMllpUrl('http://emr.example:80')).toThrow(TypeError);
    expect(() => parseMllpUrl('mllp://emr.example:80/feeds')).toThrow(TypeError);
    expect(() => parseMllpUrl('emr.example:80')).toThrow(TypeError);
  });
});
