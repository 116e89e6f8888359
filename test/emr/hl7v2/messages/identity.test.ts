// The EMR naming its ids: a patient's MRN beside our service id (ADT), an appointment's SCH-2 beside our SCH-1
// (SIU); 'none' for a record the adapter has no mapping to make for; refusals naming the field.
import { describe, expect, it } from 'vitest';
import { readIdentity } from '../../../../src/emr/hl7v2/messages/identity.ts';
import { parsed, value } from './support.ts';

const msh = (type: string) => `MSH|^~\\&|EMR|HOSPITAL|EMR-BRIDGE|SERVICE|20260201100000+0100||${type}|E-1|P|2.5.1`;
const adt = (pid3: string, trigger = 'A28') => parsed([msh(`ADT^${trigger}^ADT_A05`), `EVN|${trigger}`, `PID|1||${pid3}||Lovelace^Ada`, 'PV1|1|N'].join('\r'));
const siu = (sch: string, trigger = 'S12') => parsed([msh(`SIU^${trigger}^SIU_S12`), sch, 'PID|1||pat_1^^^SERVICE^PI'].join('\r'));
const opts = { assigningAuthority: 'SERVICE' };

describe('readIdentity for ADT', () => {
  it.each(['A01', 'A04', 'A08', 'A28', 'A31'])('reads the service id and the MR-typed MRN of an %s', (trigger) => {
    expect(value(readIdentity(adt('pat_1^^^SERVICE^PI~M-9^^^HOSP^MR', trigger), opts))).toEqual({ entityType: 'patient', serviceId: 'pat_1', emrId: 'M-9' });
  });

  it('takes the MRN under the EMR’s assigning authority when one is configured, whatever its type', () => {
    const m = adt('X-1^^^OTHER^MR~M-9^^^HOSP^PN~pat_1^^^SERVICE^PI');
    expect(value(readIdentity(m, { ...opts, emrAssigningAuthority: 'HOSP' }))).toEqual({ entityType: 'patient', serviceId: 'pat_1', emrId: 'M-9' });
  });

  it('matches an assigning authority by namespace or universal id (HD in subcomponents)', () => {
    const m = adt('pat_1^^^&2.16.840.1.113883.3.1&ISO^PI~M-9^^^HOSP&1.2.3&ISO^MR');
    expect(value(readIdentity(m, { assigningAuthority: '2.16.840.1.113883.3.1', emrAssigningAuthority: 'HOSP' }))).toEqual({
      entityType: 'patient',
      serviceId: 'pat_1',
      emrId: 'M-9',
    });
  });

  it('answers none when PID-3 lacks the service id or the MRN: a patient the adapter has no mapping to make for', () => {
    expect(value(readIdentity(adt('M-9^^^HOSP^MR'), opts))).toBe('none');
    expect(value(readIdentity(adt('pat_1^^^SERVICE^PI'), opts))).toBe('none');
    expect(value(readIdentity(adt('pat_1^^^SERVICE^PI~M-9^^^HOSP^MR'), { ...opts, emrAssigningAuthority: 'ELSEWHERE' }))).toBe('none');
  });

  it('refuses an ADT without PID naming PID-3, and an event it does not read naming MSH-9', () => {
    const noPid = readIdentity(parsed([msh('ADT^A28^ADT_A05'), 'EVN|A28'].join('\r')), opts);
    const a03 = readIdentity(adt('pat_1^^^SERVICE^PI', 'A03'), opts);
    expect(noPid.ok || noPid.refusal).toMatchObject({ field: 'PID-3', code: '100' });
    expect(a03.ok || a03.refusal).toMatchObject({ field: 'MSH-9', code: '201' });
  });
});

describe('readIdentity for SIU', () => {
  it.each(['S12', 'S13', 'S14'])('reads SCH-1 under our assigning authority and SCH-2 of an %s', (trigger) => {
    expect(value(readIdentity(siu('SCH|apt_1^SERVICE|E-77^HOSP', trigger), opts))).toEqual({ entityType: 'appointment', serviceId: 'apt_1', emrId: 'E-77' });
  });

  it('answers none without SCH-2, and for an SCH-1 under another placer’s namespace or none', () => {
    expect(value(readIdentity(siu('SCH|apt_1^SERVICE'), opts))).toBe('none');
    expect(value(readIdentity(siu('SCH|apt_1^PORTAL|E-77'), opts))).toBe('none');
    expect(value(readIdentity(siu('SCH|apt_1|E-77'), opts))).toBe('none');
  });

  it('refuses an SIU without SCH naming SCH-1, and a message type it does not read naming MSH-9', () => {
    const noSch = readIdentity(parsed([msh('SIU^S12^SIU_S12'), 'PID|1'].join('\r')), opts);
    const orm = readIdentity(parsed(msh('ORM^O01^ORM_O01')), opts);
    expect(noSch.ok || noSch.refusal).toMatchObject({ field: 'SCH-1', code: '100' });
    expect(orm.ok || orm.refusal).toMatchObject({ field: 'MSH-9', code: '200' });
  });
});
