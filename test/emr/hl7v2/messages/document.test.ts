// Documents the EMR pushes (MDM^T02/T04/T08/T10, ORU^R01), T11 cancellations, and each refusal naming its field.
import { describe, expect, it } from 'vitest';
import { type DocumentOptions, readDocument } from '../../../../src/emr/hl7v2/messages/document.ts';
import { parsed, value } from './support.ts';

const NOW = Date.parse('2026-02-01T12:00:00.000Z');
const PDF = Buffer.from('%PDF-1.4\n%synthetic\n').toString('base64');
const opts: DocumentOptions = { assigningAuthority: 'SERVICE', labReportTypes: ['LAB', 'PATH'], prescriptionTypes: ['RX'], now: NOW };

const msh = (type: string, id = 'E-1') => `MSH|^~\\&|EMR|HOSPITAL|EMR-BRIDGE|SERVICE|20260201100000+0100||${type}|${id}|P|2.5.1`;
const PID = 'PID|1||pat_1^^^SERVICE^PI~M-9^^^HOSP^MR||Lovelace^Ada^King||||||||+15550100001';
const OBX = `OBX|1|ED|PDF^Report||^application^pdf^Base64^${PDF}||||||F`;
interface Parts {
  trigger?: string;
  pid?: string;
  txa?: string;
  obx?: string[];
}
const mdm = ({ trigger = 'T02', pid = PID, txa = 'TXA|1|LAB^Full blood count|AP|||||||||DOC-1^HOSP', obx = [OBX] }: Parts = {}) =>
  parsed([msh(`MDM^${trigger}^MDM_T02`), `EVN|${trigger}`, pid, 'PV1|1|O', txa, ...obx].filter(Boolean).join('\r'));
const oru = (obr = 'OBR|1||LAB-1^HOSP|LIPID^Lipid panel', obx = [OBX]) => parsed([msh('ORU^R01^ORU_R01', 'E-5'), PID, obr, ...obx].join('\r'));
const refusalOf = (read: ReturnType<typeof readDocument>) => (read.ok ? undefined : read.refusal);

describe('readDocument', () => {
  it.each(['T02', 'T04', 'T08', 'T10'])('reads an MDM^%s into the port’s EmrDocument', (trigger) => {
    expect(value(readDocument(mdm({ trigger }), opts))).toEqual({
      kind: 'document',
      document: {
        id: 'DOC-1',
        version: 'E-1',
        documentType: 'lab_report',
        label: 'Full blood count',
        filename: 'DOC-1.pdf',
        mimeType: 'application/pdf',
        content: { base64: PDF },
        patient: { id: 'M-9', serviceId: 'pat_1', name: 'Ada King Lovelace', phone: '+15550100001' },
        lastUpdated: '2026-02-01T12:00:00.000Z',
      },
    });
  });

  it('reads a prescription type from TXA-2 and falls back to the code for a label without text', () => {
    const doc = value(readDocument(mdm({ txa: 'TXA|1|RX|AP|||||||||RX-1' }), opts));
    expect(doc.kind === 'document' && [doc.document.documentType, doc.document.label]).toEqual(['prescription', 'RX']);
  });

  it('reads an ORU^R01 as a lab report: OBR-3 the id, OBR-4’s text the label, OBX-5 in the table form AP^PDF', () => {
    const doc = value(readDocument(oru('OBR|1||LAB-1^HOSP|LIPID^Lipid panel', [`OBX|1|ED|PDF||^AP^PDF^Base64^${PDF}`]), opts));
    expect(doc.kind === 'document' && doc.document).toMatchObject({
      id: 'LAB-1',
      version: 'E-5',
      documentType: 'lab_report',
      label: 'Lipid panel',
      filename: 'LAB-1.pdf',
      mimeType: 'application/pdf',
      content: { base64: PDF },
    });
  });

  it('reads a T11 as the cancellation of the document TXA-12 names', () => {
    expect(value(readDocument(mdm({ trigger: 'T11', obx: [] }), opts))).toEqual({ kind: 'cancel', documentId: 'DOC-1' });
  });

  it('takes the first ED OBX among others, turns Hex into Base64 and ignores escaped line breaks in the data', () => {
    const hex = Buffer.from('%PDF-1.4\n').toString('hex');
    const a = value(readDocument(mdm({ obx: ['OBX|1|TX|NOTE||a note', `OBX|2|ED|PDF||^application^pdf^Hex^${hex}`] }), opts));
    expect(a.kind === 'document' && a.document.content).toEqual({ base64: Buffer.from('%PDF-1.4\n').toString('base64') });
    const wrapped = `${PDF.slice(0, 8)}\\X0D\\\\X0A\\${PDF.slice(8)}`;
    const b = value(readDocument(mdm({ obx: [`OBX|1|ED|PDF||^application^pdf^Base64^${wrapped}`] }), opts));
    expect(b.kind === 'document' && b.document.content).toEqual({ base64: PDF });
  });

  it('names the file from the MIME subtype and makes the document id safe for a file name', () => {
    const doc = value(readDocument(mdm({ txa: 'TXA|1|LAB^Scan|AP|||||||||img/7 1', obx: [`OBX|1|ED|IMG||^image^jpeg^Base64^${PDF}`] }), opts));
    expect(doc.kind === 'document' && [doc.document.filename, doc.document.mimeType]).toEqual(['img_7_1.jpg', 'image/jpeg']);
  });

  it('reads a patient known only by MRN with the MRN as its id, and one known only by service id by the port’s handle', () => {
    const byMrn = value(readDocument(mdm({ pid: 'PID|1||M-9^^^HOSP^MR||Lovelace^Ada' }), opts));
    expect(byMrn.kind === 'document' && byMrn.document.patient).toEqual({ id: 'M-9', name: 'Ada Lovelace' });
    const byService = value(readDocument(mdm({ pid: 'PID|1||pat_1^^^SERVICE^PI' }), opts));
    expect(byService.kind === 'document' && byService.document.patient).toEqual({ id: 'pending:patient:pat_1', serviceId: 'pat_1' });
    const custom = value(readDocument(mdm({ pid: 'PID|1||pat_1^^^SERVICE^PI' }), { ...opts, patientHandle: (id) => `h:${id}` }));
    expect(custom.kind === 'document' && custom.document.patient.id).toBe('h:pat_1');
  });

  it('unescapes the label and the patient’s name once', () => {
    const doc = value(readDocument(mdm({ pid: 'PID|1||M-9^^^HOSP^MR||O\\T\\Neil^Ann \\F\\ Bo', txa: 'TXA|1|LAB^CBC \\T\\ diff|AP|||||||||DOC-1' }), opts));
    expect(doc.kind === 'document' && [doc.document.label, doc.document.patient.name]).toEqual(['CBC & diff', 'Ann | Bo O&Neil']);
  });
});

describe('readDocument refusals', () => {
  it('refuses a document without TXA-12 or OBR-3 naming that field', () => {
    expect(refusalOf(readDocument(mdm({ txa: 'TXA|1|LAB^Lab' }), opts))).toMatchObject({ field: 'TXA-12', code: '101' });
    expect(refusalOf(readDocument(mdm({ txa: '' }), opts))).toMatchObject({ field: 'TXA-12', code: '100' });
    expect(refusalOf(readDocument(mdm({ trigger: 'T11', txa: 'TXA|1|LAB^Lab', obx: [] }), opts))).toMatchObject({ field: 'TXA-12' });
    expect(refusalOf(readDocument(oru('OBR|1|PLACER-1||LIPID'), opts))).toMatchObject({ field: 'OBR-3', code: '101' });
  });

  it('refuses a TXA-2 type that is neither a lab report nor a prescription type, naming TXA-2', () => {
    const refusal = refusalOf(readDocument(mdm({ txa: 'TXA|1|DS^Discharge summary|AP|||||||||DOC-1' }), opts));
    expect(refusal).toMatchObject({ field: 'TXA-2', code: '103', location: { segment: 'TXA', sequence: 1, position: 2 } });
    expect(refusal?.text).toContain('"DS"');
  });

  it('refuses a document without an ED OBX, with bad Base64 or an unknown encoding, naming OBX-5', () => {
    expect(refusalOf(readDocument(mdm({ obx: ['OBX|1|TX|NOTE||text only'] }), opts))).toMatchObject({ field: 'OBX-5', code: '101' });
    const bad = refusalOf(readDocument(mdm({ obx: ['OBX|1|TX|NOTE||x', 'OBX|2|ED|PDF||^application^pdf^Base64^not*base64'] }), opts));
    expect(bad).toMatchObject({ field: 'OBX-5', code: '102', location: { segment: 'OBX', sequence: 2, position: 5 } });
    expect(refusalOf(readDocument(mdm({ obx: ['OBX|1|ED|PDF||^application^pdf^Base64^QUJD='] }), opts))).toMatchObject({ field: 'OBX-5' });
    expect(refusalOf(readDocument(mdm({ obx: ['OBX|1|ED|PDF||^application^pdf^A^text'] }), opts))).toMatchObject({ field: 'OBX-5', code: '102' });
    expect(refusalOf(readDocument(mdm({ obx: ['OBX|1|ED|PDF||^application^pdf^Base64^'] }), opts))).toMatchObject({ field: 'OBX-5', code: '101' });
  });

  it('refuses a document whose PID-3 carries neither our service id nor an MRN, naming PID-3', () => {
    expect(refusalOf(readDocument(mdm({ pid: 'PID|1||X-1^^^OTHER^PN||Lovelace^Ada' }), opts))).toMatchObject({ field: 'PID-3', code: '101' });
    expect(refusalOf(readDocument(mdm({ pid: '' }), opts))).toMatchObject({ field: 'PID-3', code: '100' });
  });

  it('refuses a message that is not a document, naming MSH-9', () => {
    expect(refusalOf(readDocument(parsed(msh('ADT^A28^ADT_A05')), opts))).toMatchObject({ field: 'MSH-9', code: '200' });
    expect(refusalOf(readDocument(mdm({ trigger: 'T01' }), opts))).toMatchObject({ field: 'MSH-9', code: '201' });
  });
});
