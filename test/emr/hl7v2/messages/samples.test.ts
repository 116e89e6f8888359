// samples/hl7: the adapter's own samples are exactly what the builders write (rebuilt from ./sample-inputs.ts),
// and every sample is read by the module's readers with the outcome its name promises.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readAck } from '../../../../src/emr/hl7v2/messages/ack.ts';
import { buildPatientMessage } from '../../../../src/emr/hl7v2/messages/adt.ts';
import { decodeMessageBytes } from '../../../../src/emr/hl7v2/messages/charset.ts';
import { readDocument } from '../../../../src/emr/hl7v2/messages/document.ts';
import { readIdentity } from '../../../../src/emr/hl7v2/messages/identity.ts';
import { messageKey, messageType, parseMessage } from '../../../../src/emr/hl7v2/messages/read.ts';
import { buildAppointmentMessage } from '../../../../src/emr/hl7v2/messages/siu.ts';
import { AA, APPOINTMENT_SAMPLES, EMR_AA, header, PATIENT_SAMPLES } from './sample-inputs.ts';
import { value } from './support.ts';

const DIR = fileURLToPath(new URL('../../../../samples/hl7/', import.meta.url));
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.hl7'));
const bytes = (file: string) => readFileSync(DIR + file);
const message = (file: string) => value(parseMessage(value(decodeMessageBytes(bytes(file))).text));
const authorities = { assigningAuthority: AA, emrAssigningAuthority: EMR_AA };
const documentOptions = { ...authorities, labReportTypes: ['LAB'], prescriptionTypes: ['RX'], now: Date.parse('2026-03-01T09:00:00.000Z') };

describe('samples/hl7', () => {
  it('has every kind of message, each listed in its README', () => {
    const readme = readFileSync(`${DIR}README.md`, 'utf8');
    expect(FILES.sort()).toEqual(
      [
        ...Object.keys(PATIENT_SAMPLES),
        ...Object.keys(APPOINTMENT_SAMPLES),
        'ack-aa.hl7',
        'ack-ae.hl7',
        'adt-a28-notification.hl7',
        'siu-s12-notification.hl7',
        'mdm-t02.hl7',
        'mdm-t11.hl7',
        'oru-r01.hl7',
        'mdm-t02-latin1.hl7',
      ].sort(),
    );
    for (const f of FILES) expect(readme).toContain(`\`${f}\``);
  });

  it.each(FILES)('%s: segments end with CR only, and the message has a key and a type', (file) => {
    const raw = bytes(file).toString('latin1');
    expect(raw).not.toContain('\n');
    expect(raw.endsWith('\r')).toBe(true);
    expect(value(messageKey(message(file))).controlId).not.toBe('');
    expect(messageType(message(file))).toMatch(/^[A-Z]{3}\^[A-Z]\d\d$/);
  });

  // The builders' headers number the samples EB-0001… in the order of sample-inputs.ts.
  const built = [
    ...Object.entries(PATIENT_SAMPLES).map(([f, i]) => [f, (id: string) => buildPatientMessage(header(id), i).text] as const),
    ...Object.entries(APPOINTMENT_SAMPLES).map(([f, i]) => [f, (id: string) => buildAppointmentMessage(header(id), i).text] as const),
  ];
  it.each(built.map(([f, build], n) => [f, build, `EB-${String(n + 1).padStart(4, '0')}`] as const))(
    '%s is exactly what the builder writes',
    (file, build, controlId) => {
      expect(bytes(file).toString('utf8')).toBe(`${build(controlId)}\r`);
    },
  );

  it('reads the identities the EMR names, and none from the adapter’s own first snapshots', () => {
    expect(value(readIdentity(message('adt-a28-notification.hl7'), authorities))).toEqual({
      entityType: 'patient',
      serviceId: 'pat_s100',
      emrId: 'MRN-000101',
    });
    expect(value(readIdentity(message('siu-s12-notification.hl7'), authorities))).toEqual({
      entityType: 'appointment',
      serviceId: 'apt_s100',
      emrId: 'APT-7001',
    });
    expect(value(readIdentity(message('adt-a31.hl7'), authorities))).toEqual({ entityType: 'patient', serviceId: 'pat_s100', emrId: 'MRN-000101' });
    expect(value(readIdentity(message('adt-a28.hl7'), authorities))).toBe('none');
    expect(value(readIdentity(message('siu-s12.hl7'), authorities))).toBe('none');
    expect(value(readIdentity(message('siu-s13.hl7'), authorities))).toEqual({ entityType: 'appointment', serviceId: 'apt_s100', emrId: 'APT-7001' });
  });

  it('reads the documents, each a real PDF', () => {
    const docs = ['mdm-t02.hl7', 'oru-r01.hl7', 'mdm-t02-latin1.hl7'].map((f) => value(readDocument(message(f), documentOptions)));
    const read = docs.map((d) => (d.kind === 'document' ? d.document : undefined));
    expect(read.map((d) => [d?.id, d?.documentType, d?.label, d?.filename, d?.patient])).toEqual([
      ['DOC-1001', 'lab_report', 'Full blood count', 'DOC-1001.pdf', { id: 'MRN-000202', name: 'Sample Patient Two', phone: '+15550100002' }],
      ['LAB-2001', 'lab_report', 'Lipid panel', 'LAB-2001.pdf', { id: 'MRN-000101', serviceId: 'pat_s100', name: 'Sample Patient One', phone: '+15550100001' }],
      ['RX-3001', 'prescription', 'Verordnung für Zoë', 'RX-3001.pdf', { id: 'MRN-000303', name: 'Zoë Müller', phone: '+15550100003' }],
    ]);
    for (const d of read) {
      const pdf = Buffer.from(d!.content && 'base64' in d!.content ? d!.content.base64 : '', 'base64').toString('latin1');
      expect(pdf.startsWith('%PDF-')).toBe(true);
      expect(pdf.trimEnd().endsWith('%%EOF')).toBe(true);
    }
  });

  it('reads the cancellation and both acknowledgments', () => {
    expect(value(readDocument(message('mdm-t11.hl7'), documentOptions))).toEqual({ kind: 'cancel', documentId: 'DOC-1001' });
    expect(value(readAck(message('ack-aa.hl7')))).toEqual({ code: 'AA', outcome: 'accepted', controlId: 'EB-0001' });
    expect(value(readAck(message('ack-ae.hl7')))).toEqual({
      code: 'AE',
      outcome: 'refused',
      controlId: 'EB-0005',
      text: 'AIP-3: Unknown practitioner doc_s100',
    });
  });
});
