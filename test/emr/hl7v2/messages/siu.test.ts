// SIU messages for an appointment's events, field by field against the contract (section 6).
import { describe, expect, it } from 'vitest';
import { buildAppointmentMessage, type AppointmentMessageInput } from '../../../../src/emr/hl7v2/messages/siu.ts';
import { value as read } from '../../../../src/emr/hl7v2/messages/read.ts';
import { HEADER, lines, parsed } from './support.ts';

const input: AppointmentMessageInput = {
  trigger: 'S12',
  appointment: { serviceId: 'apt_1', status: 'Approved', startsAt: '2026-02-01T09:00:00.000Z', startsAtLocal: '2026-02-01T10:00:00.000+01:00' },
  patient: { serviceId: 'pat_1', name: 'Ada Lovelace', phone: '+15550100001' },
  doctor: { serviceId: 'doc_1', name: 'Grace Brewster Hopper' },
  location: { serviceId: 'loc_1', name: 'Room 1' },
};
const build = (change: Partial<AppointmentMessageInput> = {}) => buildAppointmentMessage(HEADER, { ...input, ...change });
const withAppointment = (a: Partial<AppointmentMessageInput['appointment']>) => build({ appointment: { ...input.appointment, ...a } });

describe('buildAppointmentMessage', () => {
  it('writes an S12 in SIU_S12 order: MSH SCH TQ1 PID PV1 RGS AIL AIP', () => {
    expect(lines(build().text)).toEqual([
      'MSH|^~\\&|EMR-BRIDGE|SERVICE|EMR|HOSPITAL|20260201090000+0000||SIU^S12^SIU_S12|ctl-1|P|2.5.1',
      'SCH|apt_1^SERVICE|||||S12^New appointment|||||^^^20260201100000+0100||||||||||||||Booked',
      'TQ1|1||||||20260201100000+0100',
      'PID|1||pat_1^^^SERVICE^PI||Lovelace^Ada||||||||+15550100001',
      'PV1|1|O',
      'RGS|1',
      'AIL|1||loc_1^^^^^^^^Room 1^^SERVICE',
      'AIP|1||doc_1^Hopper^Grace Brewster^^^^^^SERVICE',
    ]);
  });

  it.each(['S12', 'S13', 'S14', 'S15'] as const)('names %s in MSH-9 with the structure SIU_S12', (trigger) => {
    expect(build({ trigger }).message.getSegment('MSH')!.getField(9).toString()).toBe(`SIU^${trigger}^SIU_S12`);
  });

  it('writes SCH-1 as the appointment’s service id under our assigning authority, and SCH-2 the filler id once known', () => {
    const sch = build({ fillerId: 'E-77' }).message.getSegment('SCH')!;
    expect(sch.getComponent(1, 1)).toBe('apt_1');
    expect(sch.getComponent(1, 2)).toBe('SERVICE');
    expect(sch.getField(2).toString()).toBe('E-77');
    expect(build().message.getSegment('SCH')!.getField(2).toString()).toBe('');
  });

  it('puts the local start with its offset in SCH-11 component 4 and TQ1-7', () => {
    const m = build().message;
    expect(m.getSegment('SCH')!.getComponent(11, 4)).toBe('20260201100000+0100');
    expect(m.getSegment('TQ1')!.getField(7).toString()).toBe('20260201100000+0100');
  });

  it('falls back to startsAt in UTC when the snapshot has no local time', () => {
    const m = withAppointment({ startsAtLocal: undefined }).message;
    expect(m.getSegment('TQ1')!.getField(7).toString()).toBe('20260201090000+0000');
  });

  it('adds the duration and end time when the duration is known', () => {
    const m = withAppointment({ durationMinutes: 45 }).message;
    expect(m.getSegment('SCH')!.getField(11).toString()).toBe('^^M45^20260201100000+0100^20260201104500+0100');
    expect(lines(withAppointment({ durationMinutes: 45 }).text)[2]).toBe('TQ1|1|||||45^min|20260201100000+0100|20260201104500+0100');
  });

  it.each([
    ['Approved', 'Booked'],
    ['Pending', 'Pending'],
    ['Cancelled', 'Cancelled'],
    ['Completed', 'Complete'],
    ['NoShow', 'Noshow'],
    ['Rescheduled-By-Phone', 'Rescheduled-By-Phone'],
    ['constructor', 'constructor'],
  ])('maps status %s to SCH-25 %s (unknown values as received)', (status, code) => {
    expect(withAppointment({ status }).message.getSegment('SCH')!.getField(25).toString()).toBe(code);
  });

  it('carries the patient’s PID with the MRN once known, and PV1|1|O', () => {
    const m = build({ patient: { ...input.patient, mrn: 'M1' }, emrAssigningAuthority: 'HOSPITAL' }).message;
    expect(m.getSegment('PID')!.getField(3).toString()).toBe('pat_1^^^SERVICE^PI~M1^^^HOSPITAL^MR');
    expect(m.getSegment('PV1')!.toString()).toBe('PV1|1|O');
  });

  it('puts the doctor’s service id first in AIP-3 with the name after it and our assigning authority in XCN.9', () => {
    const aip = build().message.getSegment('AIP')!;
    expect(aip.getComponent(3, 1)).toBe('doc_1');
    expect(aip.getComponent(3, 2)).toBe('Hopper');
    expect(aip.getComponent(3, 3)).toBe('Grace Brewster');
    expect(aip.getComponent(3, 9)).toBe('SERVICE');
  });

  it('puts the location’s service id first in AIL-3, its name in PL.9 and our assigning authority in PL.11', () => {
    const ail = build().message.getSegment('AIL')!;
    expect(ail.getComponent(3, 1)).toBe('loc_1');
    expect(ail.getComponent(3, 9)).toBe('Room 1');
    expect(ail.getComponent(3, 11)).toBe('SERVICE');
  });

  it('names a doctor the EMR knows by its own id alone in AIP-3: the name after it, no assigning authority', () => {
    const text = build({ doctor: { emrId: 'DR-17', name: 'Grace Brewster Hopper' } }).text;
    expect(lines(text).at(-1)).toBe('AIP|1||DR-17^Hopper^Grace Brewster');
    expect(lines(text).at(-2)).toBe('AIL|1||loc_1^^^^^^^^Room 1^^SERVICE');
  });

  it('names a location the EMR knows by its own id alone in AIL-3: its name in PL.9, no assigning authority', () => {
    const text = build({ location: { emrId: 'DEPT-4', name: 'Room 1' } }).text;
    expect(lines(text).at(-2)).toBe('AIL|1||DEPT-4^^^^^^^^Room 1');
    expect(lines(text).at(-1)).toBe('AIP|1||doc_1^Hopper^Grace Brewster^^^^^^SERVICE');
  });

  it('writes the notes in an NTE with line breaks escaped, and none for empty notes', () => {
    const text = build({ appointment: { ...input.appointment, notes: 'Fasting.\r\nBring results | ~' } }).text;
    expect(lines(text)[3]).toBe('NTE|1||Fasting.\\X0D\\\\X0A\\Bring results \\F\\ \\R\\');
    expect(read(parsed(text).getSegment('NTE'), 3)).toBe('Fasting.\r\nBring results | ~');
    expect(withAppointment({ notes: '  ' }).message.getSegment('NTE')).toBeUndefined();
  });

  it('escapes every value, so ids and names with |^~\\& round-trip through build, parse and read', () => {
    const odd = 'x|y^z~w\\v&u';
    const m = parsed(
      build({
        appointment: { ...input.appointment, serviceId: odd, status: odd },
        fillerId: odd,
        doctor: { serviceId: odd, name: `Dr ${odd}` },
        location: { serviceId: odd, name: odd },
      }).text,
    );
    expect(m.segments.map((s) => s.name)).toEqual(['MSH', 'SCH', 'TQ1', 'PID', 'PV1', 'RGS', 'AIL', 'AIP']);
    const sch = m.getSegment('SCH');
    expect([read(sch, 1, 1), read(sch, 1, 2), read(sch, 2, 1), read(sch, 25, 1)]).toEqual([odd, 'SERVICE', odd, odd]);
    expect([read(m.getSegment('AIP'), 3, 1), read(m.getSegment('AIP'), 3, 2), read(m.getSegment('AIP'), 3, 9)]).toEqual([odd, odd, 'SERVICE']);
    expect([read(m.getSegment('AIL'), 3, 1), read(m.getSegment('AIL'), 3, 9)]).toEqual([odd, odd]);
  });
});
