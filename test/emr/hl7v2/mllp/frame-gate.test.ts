// The gate in front of @medplum/hl7's framer: it hands on whole frames only and counts bytes since the
// last complete frame against the size limit.
import { describe, expect, it } from 'vitest';
import { createFrameGate } from '../../../../src/emr/hl7v2/mllp/frame-gate.ts';
import { frame } from './support/peers.ts';

const bytesOf = (s: string) => Buffer.from(s, 'latin1');

describe('createFrameGate', () => {
  it('holds a partial frame and hands it on, with everything before it, once FS CR arrives', () => {
    const gate = createFrameGate(100);
    const whole = frame('MSH|a');
    expect(gate.push(whole.subarray(0, 3))).toEqual({ kind: 'hold' });
    expect(gate.push(whole.subarray(3, whole.length - 1))).toEqual({ kind: 'hold' });
    expect(gate.push(whole.subarray(whole.length - 1))).toEqual({ kind: 'deliver', bytes: whole });
  });

  it('hands on up to the last FS CR and keeps the rest for later', () => {
    const gate = createFrameGate(100);
    const a = frame('MSH|a');
    const b = frame('MSH|b');
    const result = gate.push(Buffer.concat([a, b, b.subarray(0, 4)]));
    expect(result).toEqual({ kind: 'deliver', bytes: Buffer.concat([a, b]) });
    expect(gate.push(b.subarray(4))).toEqual({ kind: 'deliver', bytes: b });
  });

  it('takes a message of exactly the limit and refuses one byte more', () => {
    expect(createFrameGate(10).push(frame('x'.repeat(10))).kind).toBe('deliver');
    expect(createFrameGate(10).push(frame('x'.repeat(11)))).toEqual({ kind: 'oversize', bytes: 14 });
  });

  it('refuses an oversize frame even when a good frame follows it in the same read', () => {
    expect(createFrameGate(10).push(Buffer.concat([frame('x'.repeat(20)), frame('ok')])).kind).toBe('oversize');
  });

  it('refuses an unterminated run as soon as it passes the limit, split over reads', () => {
    const gate = createFrameGate(10);
    expect(gate.push(bytesOf('\x0bxxxxxxxx')).kind).toBe('hold');
    expect(gate.push(bytesOf('xxxxxx')).kind).toBe('oversize');
  });

  it('sees an FS at the end of one read and the CR at the start of the next as a frame end', () => {
    const gate = createFrameGate(10);
    expect(gate.push(bytesOf('\x0bxxxxxxxxxx\x1c')).kind).toBe('hold');
    expect(gate.push(bytesOf('\r')).kind).toBe('deliver');
    // The count starts again after that end: another full-size message fits.
    expect(gate.push(frame('y'.repeat(10))).kind).toBe('deliver');
  });

  it('does not take an FS without CR (or a CR without FS) for a frame end', () => {
    const gate = createFrameGate(100);
    expect(gate.push(bytesOf('\x0bMSH|a\x1cb\rc')).kind).toBe('hold');
  });
});
