// Taking a received message in: bytes in the character set MSH-18 names, text into an Hl7Message, and the key
// (MSH-3, MSH-4, MSH-10) that tells a message sent again from a new one.
import { describe, expect, it } from 'vitest';
import { decodeMessageBytes } from '../../../../src/emr/hl7v2/messages/charset.ts';
import { messageKey, messageType, parseMessage } from '../../../../src/emr/hl7v2/messages/read.ts';
import { parsed, value } from './support.ts';

const MSH = (extra = '') => `MSH|^~\\&|EMR^1.2.3^ISO|HOSPITAL|EMR-BRIDGE|SERVICE|20260201100000+0100||ADT^A28^ADT_A05|E-1|P|2.5.1${extra}`;

describe('parseMessage', () => {
  it('takes CR or LF segment ends and drops trailing ones without making an empty segment', () => {
    expect(parsed(`${MSH()}\r\nPID|1\r\n\r`).segments.map((s) => s.name)).toEqual(['MSH', 'PID']);
  });

  it('refuses text that does not start with MSH, naming MSH-1, and separators that are not five distinct characters, naming MSH-2', () => {
    const notHl7 = parseMessage('PID|1');
    const badSeparators = parseMessage('MSH|^^\\&|EMR');
    expect(notHl7.ok || notHl7.refusal.field).toBe('MSH-1');
    expect(badSeparators.ok || badSeparators.refusal.field).toBe('MSH-2');
  });
});

describe('messageType and messageKey', () => {
  it('reads MSH-9 as code^trigger', () => {
    expect(messageType(parsed(MSH()))).toBe('ADT^A28');
  });

  it('keys a message by MSH-3 and MSH-4 as they stand and MSH-10', () => {
    expect(value(messageKey(parsed(MSH())))).toEqual({ sendingApplication: 'EMR^1.2.3^ISO', sendingFacility: 'HOSPITAL', controlId: 'E-1' });
  });

  it('refuses a message without MSH-10, naming it', () => {
    const read = messageKey(parsed('MSH|^~\\&|EMR|HOSPITAL|||20260201||ADT^A28|'));
    expect(read.ok || read.refusal.field).toBe('MSH-10');
  });
});

describe('decodeMessageBytes', () => {
  const text = (extra: string, name: string) => `${MSH(extra)}\rPID|1||M-1^^^HOSP^MR||${name}`;

  it('reads ISO-8859-1 bytes when MSH-18 says 8859/1', () => {
    const read = value(decodeMessageBytes(Buffer.from(text('||||||8859/1', 'Müller^Zoë'), 'latin1')));
    expect(read.charset).toBe('latin1');
    expect(read.text).toContain('Müller^Zoë');
  });

  it('reads UTF-8 when MSH-18 is empty or says so', () => {
    expect(value(decodeMessageBytes(Buffer.from(text('', 'Müller^Zoë')))).text).toContain('Müller^Zoë');
    expect(value(decodeMessageBytes(Buffer.from(text('||||||UNICODE UTF-8', 'Müller^Zoë')))).charset).toBe('utf-8');
  });

  it('refuses bytes that are not the character set declared, and a set it does not read, naming MSH-18', () => {
    const latin1Undeclared = decodeMessageBytes(Buffer.from(text('', 'Müller'), 'latin1'));
    const unknown = decodeMessageBytes(Buffer.from(text('||||||ISO IR87', 'X')));
    expect(latin1Undeclared.ok || latin1Undeclared.refusal).toMatchObject({ field: 'MSH-18', code: '102' });
    expect(unknown.ok || unknown.refusal).toMatchObject({ field: 'MSH-18', code: '103' });
  });
});
