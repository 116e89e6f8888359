// ADT messages for a patient snapshot, field by field against the contract (section 6).
import { describe, expect, it } from 'vitest';
import { buildPatientMessage } from '../../../../src/emr/hl7v2/messages/adt.ts';
import { joinName, splitName } from '../../../../src/emr/hl7v2/messages/names.ts';
import { patientIds, patientName } from '../../../../src/emr/hl7v2/messages/patient.ts';
import { HEADER, lines, parsed } from './support.ts';

const patient = { serviceId: 'pat_1', name: 'Ada Lovelace', phone: '+15550100001' };

describe('buildPatientMessage', () => {
  it('writes an A28 as MSH, EVN, PID and PV1|1|N with the service id under our assigning authority', () => {
    expect(lines(buildPatientMessage(HEADER, { trigger: 'A28', patient }).text)).toEqual([
      'MSH|^~\\&|EMR-BRIDGE|SERVICE|EMR|HOSPITAL|20260201090000+0000||ADT^A28^ADT_A05|ctl-1|P|2.5.1',
      'EVN|A28|20260201090000+0000',
      'PID|1||pat_1^^^SERVICE^PI||Lovelace^Ada||||||||+15550100001',
      'PV1|1|N',
    ]);
  });

  it.each([
    ['A28', 'ADT^A28^ADT_A05'],
    ['A31', 'ADT^A31^ADT_A05'],
    ['A04', 'ADT^A04^ADT_A01'],
    ['A08', 'ADT^A08^ADT_A01'],
  ] as const)('names %s with the message type and structure %s in MSH-9, the trigger in EVN-1', (trigger, type) => {
    const m = buildPatientMessage(HEADER, { trigger, patient }).message;
    expect(m.getSegment('MSH')!.getField(9).toString()).toBe(type);
    expect(m.getSegment('EVN')!.getField(1).toString()).toBe(trigger);
  });

  it('leaves MSH-15 and MSH-16 empty (original acknowledgment mode) and keeps the caller’s MSH-10', () => {
    const msh = parsed(buildPatientMessage({ ...HEADER, controlId: 'abc-42' }, { trigger: 'A31', patient }).text).getSegment('MSH')!;
    expect(msh.getField(10).toString()).toBe('abc-42');
    expect(msh.getField(11).toString()).toBe('P');
    expect(msh.getField(12).toString()).toBe('2.5.1');
    expect(msh.getField(15)?.toString() ?? '').toBe('');
    expect(msh.getField(16)?.toString() ?? '').toBe('');
  });

  it('adds the MRN as a second PID-3 repetition under the EMR’s assigning authority, typed MR', () => {
    const pid = buildPatientMessage(HEADER, { trigger: 'A31', patient, mrn: 'M1', emrAssigningAuthority: 'HOSPITAL' }).message.getSegment('PID')!;
    expect(pid.getField(3).toString()).toBe('pat_1^^^SERVICE^PI~M1^^^HOSPITAL^MR');
  });

  it('writes the MRN typed MR without an assigning authority when none is configured', () => {
    const pid = buildPatientMessage(HEADER, { trigger: 'A31', patient, mrn: 'M1' }).message.getSegment('PID')!;
    expect(pid.getField(3).toString()).toBe('pat_1^^^SERVICE^PI~M1^^^^MR');
  });

  it('puts the phone in PID-13', () => {
    expect(buildPatientMessage(HEADER, { trigger: 'A28', patient }).message.getSegment('PID')!.getComponent(13, 1)).toBe('+15550100001');
  });

  it('escapes every value, so a name and phone with |^~\\& come back unchanged through parse and read', () => {
    const odd = { serviceId: 'pat|^~\\&1', name: 'Ada^Jr | Love~lace\\&Co', phone: '+1|555' };
    const header = { ...HEADER, sendingApplication: 'EMR|BRIDGE', controlId: 'c^1' };
    const m = parsed(buildPatientMessage(header, { trigger: 'A28', patient: odd }).text);
    const pid = m.getSegment('PID')!;
    expect(patientIds(pid, { assigningAuthority: 'SERVICE' })).toEqual({ serviceId: 'pat|^~\\&1' });
    expect(patientName(pid)).toBe('Ada^Jr | Love~lace\\&Co');
    expect(m.segments).toHaveLength(4);
    expect(m.getSegment('MSH')!.getField(3).toString()).toBe('EMR\\F\\BRIDGE');
    expect(m.getSegment('MSH')!.getField(10).toString()).toBe('c\\S\\1');
  });
});

describe('the name rule', () => {
  it('splits on the last space: the last word is the family name', () => {
    expect(splitName('Ada Lovelace')).toEqual({ family: 'Lovelace', given: 'Ada' });
    expect(splitName('  Ada  King   Lovelace ')).toEqual({ family: 'Lovelace', given: 'Ada King' });
  });

  it('takes one word as the family name alone', () => {
    expect(splitName('Madonna')).toEqual({ family: 'Madonna', given: '' });
    expect(lines(buildPatientMessage(HEADER, { trigger: 'A28', patient: { ...patient, name: 'Madonna' } }).text)[2]).toContain('||Madonna||');
  });

  it('gives the service’s string back when rejoined, even for a compound family name', () => {
    expect(joinName(splitName('Ludwig van Beethoven'))).toBe('Ludwig van Beethoven');
    expect(joinName({ family: 'One', given: 'Sample', middle: 'Patient' })).toBe('Sample Patient One');
  });
});
