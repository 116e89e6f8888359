// Acknowledgments: reading the EMR's (each code, the ERR text for a dead letter) and writing the adapter's
// own (AA, and AE with an ERR segment naming the field).
import { describe, expect, it } from 'vitest';
import { buildAck, readAck } from '../../../../src/emr/hl7v2/messages/ack.ts';
import type { Refusal } from '../../../../src/emr/hl7v2/messages/refusal.ts';
import { lines, NOW, parsed, value } from './support.ts';

const MSH = 'MSH|^~\\&|EMR|HOSPITAL|EMR-BRIDGE|SERVICE|20260201100001+0100||ACK^A28^ACK|E-1|P|2.5.1';
const ack = (...segments: string[]) => parsed([MSH, ...segments].join('\r'));

describe('readAck', () => {
  it.each([
    ['AA', 'accepted'],
    ['CA', 'accepted'],
    ['AE', 'refused'],
    ['CE', 'refused'],
    ['AR', 'rejected'],
    ['CR', 'rejected'],
  ] as const)('reads %s as %s, with MSA-2 the acknowledged control id', (code, outcome) => {
    expect(value(readAck(ack(`MSA|${code}|ctl-1`)))).toEqual({ code, outcome, controlId: 'ctl-1' });
  });

  it('reads an AE’s ERR-8 user message with the location of ERR-2', () => {
    const read = value(
      readAck(ack('MSA|AE|ctl-1|Application Error', 'ERR||PID^1^5|101^Required field missing^HL70357|E||||Family name \\T\\ given name missing')),
    );
    expect(read.text).toBe('PID-5: Family name & given name missing');
  });

  it('falls back to ERR-3’s text, then its code, and joins several ERR segments', () => {
    const read = value(readAck(ack('MSA|AE|ctl-1', 'ERR||SCH^1^1|103^Table value not found^HL70357|E', 'ERR|||207|E')));
    expect(read.text).toBe('SCH-1: Table value not found; 207');
  });

  it('reads the v2.3/2.4 ERR-1 (segment^sequence^field^code&text)', () => {
    expect(value(readAck(ack('MSA|CE|ctl-1', 'ERR|PID^1^3^204&Unknown key identifier'))).text).toBe('PID-3: Unknown key identifier');
  });

  it('falls back to MSA-3 when there is no ERR segment, and gives no text when there is none', () => {
    expect(value(readAck(ack('MSA|AR|ctl-1|Database locked'))).text).toBe('Database locked');
    expect(value(readAck(ack('MSA|AA|ctl-1'))).text).toBeUndefined();
  });

  it('refuses an acknowledgment without MSA, or with a code that is not one, naming MSA-1', () => {
    const none = readAck(ack('ERR|||207'));
    const bad = readAck(ack('MSA|OK|ctl-1'));
    expect(none.ok || none.refusal.field).toBe('MSA-1');
    expect(bad.ok || bad.refusal.field).toBe('MSA-1');
  });
});

describe('buildAck', () => {
  const received = parsed('MSH|^~\\&|EMR|HOSPITAL|EMR-BRIDGE|SERVICE|20260201100000+0100||MDM^T02^MDM_T02|E-42|P|2.5.1\rTXA|1|LAB^Lab');

  it('answers AA with sender and receiver swapped, the clock’s time, its own control id and MSA-2 the message’s MSH-10', () => {
    expect(lines(buildAck(received, 'AA', { controlId: 'ack-1', now: NOW }).text)).toEqual([
      'MSH|^~\\&|EMR-BRIDGE|SERVICE|EMR|HOSPITAL|20260201090000+0000||ACK^T02^ACK|ack-1|P|2.5.1',
      'MSA|AA|E-42|OK',
    ]);
  });

  it('answers AE with an ERR segment naming the field (ERR-2), the HL7 code (ERR-3) and the text (ERR-8, escaped)', () => {
    const error: Refusal = { field: 'TXA-12', location: { segment: 'TXA', sequence: 1, position: 12 }, code: '101', text: 'TXA-12 | missing' };
    const built = buildAck(received, 'AE', { controlId: 'ack-2', now: NOW, error });
    expect(lines(built.text).slice(1)).toEqual([
      'MSA|AE|E-42|TXA-12 \\F\\ missing',
      'ERR||TXA^1^12|101^Required field missing^HL70357|E||||TXA-12 \\F\\ missing',
    ]);
    expect(value(readAck(parsed(built.text)))).toEqual({ code: 'AE', outcome: 'refused', controlId: 'E-42', text: 'TXA-12: TXA-12 | missing' });
  });
});
