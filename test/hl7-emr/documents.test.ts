// Documents the bundled HL7 EMR files on request: MDM^T02 (TXA-2 `<type code>^<label>`, TXA-12 the document
// id, TXA-17 AU, the PDF base64 intact in an OBX of type ED) or ORU^R01 (OBR-3 the id, OBR-4 `^<label>`),
// for a patient found by the service's id or by MRN, sent to the notify target like any notification.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/errors.ts';
import { adt, clientOf, field, send, startEmr, startTarget, waitFor } from './support.ts';

async function emrWithPatient() {
  const target = await startTarget();
  const emr = await startEmr({ notify: target.url });
  await send(clientOf(emr), adt('A28', { serviceId: 'pat-doc', name: 'Doe^Jane', phone: '+15550100009' }));
  await waitFor(() => emr.pendingNotifications() === 0);
  target.received.length = 0;
  return { target, emr, mrn: emr.patients()[0]!.mrn };
}

describe('the bundled HL7 EMR files documents', () => {
  it('sends a lab report as MDM^T02 with the PDF base64 intact and both patient ids', async () => {
    const { target, emr, mrn } = await emrWithPatient();
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(20_000)]);
    const documentId = emr.fileDocument({ patientServiceId: 'pat-doc', documentType: 'lab_report', label: 'Ferritin', filename: 'ferritin.pdf', pdf });
    const [mdm] = await waitFor(() => (target.received.length ? target.received : undefined));
    expect(field(mdm!, 'MSH', 9)).toBe('MDM^T02^MDM_T02');
    expect(field(mdm!, 'EVN', 1)).toBe('T02');
    expect(field(mdm!, 'PID', 3)).toBe(`pat-doc^^^SERVICE^PI~${mrn}^^^HOSPITAL^MR`);
    expect(field(mdm!, 'PID', 5)).toBe('Doe^Jane');
    expect(field(mdm!, 'PID', 13)).toBe('+15550100009');
    expect(mdm!.getSegment('PV1')).toBeDefined();
    expect(field(mdm!, 'TXA', 2)).toBe('LAB^Ferritin');
    expect(field(mdm!, 'TXA', 12)).toBe(documentId);
    expect(field(mdm!, 'TXA', 17)).toBe('AU');
    const obx = mdm!.getSegment('OBX')!;
    expect(obx.getField(2).toString()).toBe('ED');
    expect([2, 3, 4].map((c) => obx.getField(5).getComponent(c))).toEqual(['application', 'pdf', 'Base64']);
    expect(Buffer.from(obx.getField(5).getComponent(5), 'base64').equals(pdf)).toBe(true);
  });

  it('sends a prescription for a patient found by MRN with its type code RX and the id it is given', async () => {
    const { target, emr, mrn } = await emrWithPatient();
    const pdf = Buffer.from('%PDF-1.4 rx');
    expect(emr.fileDocument({ mrn, documentType: 'prescription', label: 'Amoxicillin 500 mg', pdf, documentId: 'RX-1' })).toBe('RX-1');
    const [mdm] = await waitFor(() => (target.received.length ? target.received : undefined));
    expect(field(mdm!, 'TXA', 2)).toBe('RX^Amoxicillin 500 mg');
    expect(field(mdm!, 'TXA', 12)).toBe('RX-1');
    expect(field(mdm!, 'PID', 3)).toContain('pat-doc^^^SERVICE^PI');
  });

  it('sends a lab result as ORU^R01 with OBR-3 the document id and OBR-4 the label', async () => {
    const { target, emr } = await emrWithPatient();
    const pdf = Buffer.from('%PDF-1.4 oru');
    const documentId = emr.fileLabResult({ patientServiceId: 'pat-doc', label: 'HbA1c', pdf });
    const [oru] = await waitFor(() => (target.received.length ? target.received : undefined));
    expect(field(oru!, 'MSH', 9)).toBe('ORU^R01^ORU_R01');
    expect(field(oru!, 'OBR', 3)).toBe(documentId);
    expect(field(oru!, 'OBR', 4)).toBe('^HbA1c');
    expect(field(oru!, 'OBX', 2)).toBe('ED');
    expect(Buffer.from(oru!.getSegment('OBX')!.getField(5).getComponent(5), 'base64').equals(pdf)).toBe(true);
  });

  it('escapes separators in the label', async () => {
    const { target, emr } = await emrWithPatient();
    emr.fileDocument({ patientServiceId: 'pat-doc', documentType: 'lab_report', label: 'Na|K^Cl', pdf: Buffer.from('%PDF-1.4') });
    const [mdm] = await waitFor(() => (target.received.length ? target.received : undefined));
    expect(field(mdm!, 'TXA', 2)).toBe('LAB^Na\\F\\K\\S\\Cl');
  });

  it('refuses a patient it does not know', async () => {
    const { emr } = await emrWithPatient();
    expect(() => emr.fileDocument({ mrn: 'MRN999999', documentType: 'lab_report', label: 'x', pdf: Buffer.from('%PDF-') })).toThrow(NotFoundError);
  });
});
