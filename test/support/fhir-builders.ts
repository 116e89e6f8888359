// EMR records as a hospital's staff would write them, for end-to-end tests: a Patient and a lab report
// DocumentReference; each builder takes the one thing a test changes.
import { toIso } from '../../src/clock.ts';
import { PDF } from './simulator-fixture.ts';

/** A Patient the EMR owns, reachable by phone. */
export const emrPatient = (phone: string, o: Record<string, unknown> = {}) => ({
  resourceType: 'Patient',
  name: [{ text: 'Synthetic Patient' }],
  telecom: [{ system: 'phone', value: phone }],
  ...o,
});

/** A current lab report (LOINC 11502-2) for a patient, the PDF inline unless the attachment says otherwise. */
export const labReportDocument = (patientId: string, description: string, attachment: Record<string, unknown> = {}) => ({
  resourceType: 'DocumentReference',
  status: 'current',
  type: { coding: [{ system: 'http://loinc.org', code: '11502-2' }] },
  subject: { reference: `Patient/${patientId}` },
  description,
  date: toIso(Date.now()),
  content: [
    {
      attachment: {
        contentType: 'application/pdf',
        title: `${description.toLowerCase().replace(/\W+/g, '-')}.pdf`,
        data: PDF.toString('base64'),
        ...attachment,
      },
    },
  ],
});
