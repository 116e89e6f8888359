// DTM values: an appointment keeps the clinic's local time and offset as given; the message time is UTC.
import { describe, expect, it } from 'vitest';
import { hl7DateTime, hl7DateTimePlusMinutes, hl7Now } from '../../../../src/emr/hl7v2/messages/time.ts';

describe('hl7DateTime', () => {
  it('keeps the local time and its offset as given', () => {
    expect(hl7DateTime('2026-02-01T10:00:00.000+01:00')).toBe('20260201100000+0100');
    expect(hl7DateTime('2026-07-01T08:15:30-05:30')).toBe('20260701081530-0530');
  });

  it('writes Z as +0000 and takes a time without seconds', () => {
    expect(hl7DateTime('2026-02-01T09:00:00.000Z')).toBe('20260201090000+0000');
    expect(hl7DateTime('2026-02-01T09:00+01:00')).toBe('20260201090000+0100');
  });

  it('refuses a time without an offset or a date that does not exist', () => {
    expect(() => hl7DateTime('2026-02-01T10:00:00')).toThrow(RangeError);
    expect(() => hl7DateTime('2026-02-30T10:00:00Z')).toThrow(RangeError);
  });
});

describe('hl7DateTimePlusMinutes', () => {
  it('adds minutes on the local reading, across midnight, keeping the offset', () => {
    expect(hl7DateTimePlusMinutes('2026-02-01T23:50:00.000+01:00', 30)).toBe('20260202002000+0100');
  });
});

describe('hl7Now', () => {
  it('writes the injected clock in UTC to the second', () => {
    expect(hl7Now(Date.parse('2026-02-01T09:00:00.999Z'))).toBe('20260201090000+0000');
  });
});
