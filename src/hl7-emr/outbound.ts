// The messages the bundled EMR sends to its notify target: ADT^A28/A31 for a new or changed patient,
// SIU^S12–S15 for a new or changed appointment (SCH-1 the service's id, SCH-2 the EMR's filler id), and the
// documents it files, MDM^T02 and ORU^R01 with the PDF base64 in an OBX of type ED. Each is built once, its
// MSH-10 fixed, and queued as text: a retry sends exactly the same message. Each carries the key of what it is
// about (`appointment:<service id>` for SIU; `patient:<service id>`, else `patient-mrn:<MRN>`, for ADT and
// documents): over several notify connections, one key's messages keep their order.
import type { Clock } from '../clock.ts';
import { EMR_AUTHORITY, type EmrAppointment, type EmrPatient } from './model.ts';
import { components, hl7Time, message, repetitions, segment, segmentAt } from './hl7-text.ts';
import type { QueuedMessage } from './state.ts';

export interface OutboundContext {
  /** The service's assigning authority (PID-3 PI repetitions, SCH-1's namespace). */
  assigningAuthority: string;
  nextControlId(): string;
  clock: Clock;
}

/** Who a message is about: the ids known (the service's, the MRN) and PID-5 / PID-13 as HL7 text. */
export interface PatientIds {
  serviceId?: string;
  mrn?: string;
  name?: string;
  phone?: string;
}

export type AppointmentTrigger = 'S12' | 'S13' | 'S14' | 'S15';

function pid(ctx: OutboundContext, p: PatientIds) {
  const ids = repetitions(
    p.serviceId ? components(p.serviceId, '', '', ctx.assigningAuthority, 'PI') : '',
    p.mrn ? components(p.mrn, '', '', EMR_AUTHORITY, 'MR') : '',
  );
  return segmentAt('PID', { 1: '1', 3: ids, 5: p.name, 13: p.phone });
}

const pv1 = () => segment('PV1', '1', 'N');

function queued(
  ctx: OutboundContext,
  type: string,
  key: string | undefined,
  build: (header: { type: string; controlId: string; at: number }) => string,
): QueuedMessage {
  const controlId = ctx.nextControlId();
  return { id: controlId, type, text: build({ type, controlId, at: ctx.clock.now() }), ...(key ? { key } : {}) };
}

/** The key of a patient's messages: by the service's id, else by the MRN (none when neither is known). */
function patientKey(p: PatientIds): string | undefined {
  if (p.serviceId) return `patient:${p.serviceId}`;
  return p.mrn ? `patient-mrn:${p.mrn}` : undefined;
}

export function patientNotification(ctx: OutboundContext, trigger: 'A28' | 'A31', p: EmrPatient): QueuedMessage {
  return queued(ctx, `ADT^${trigger}^ADT_A05`, patientKey(p), (h) => message(h, segment('EVN', trigger, hl7Time(h.at)), pid(ctx, p), pv1()).toString());
}

export function appointmentNotification(ctx: OutboundContext, trigger: AppointmentTrigger, a: EmrAppointment, patient: PatientIds | undefined): QueuedMessage {
  return queued(ctx, `SIU^${trigger}^SIU_S12`, `appointment:${a.serviceId}`, (h) => {
    const sch = segmentAt('SCH', {
      1: components(a.serviceId, ctx.assigningAuthority),
      2: components(a.fillerId, EMR_AUTHORITY),
      11: a.start ? components('', '', '', a.start) : undefined,
      25: components(a.status),
    });
    const tq1 = segmentAt('TQ1', { 1: '1', 7: a.start || undefined });
    return message(h, sch, tq1, pid(ctx, patient ?? {}), pv1(), segment('RGS', '1')).toString();
  });
}

export interface FiledDocument {
  documentId: string;
  /** TXA-2's identifier: the type code (LAB, RX, …). */
  typeCode: string;
  label: string;
  filename?: string;
  pdf: Buffer;
}

const ed = (pdf: Buffer) => components('', 'application', 'pdf', 'Base64', pdf.toString('base64'));

export function documentMessage(ctx: OutboundContext, doc: FiledDocument, patient: PatientIds): QueuedMessage {
  return queued(ctx, 'MDM^T02^MDM_T02', patientKey(patient), (h) => {
    const at = hl7Time(h.at);
    const txa = segmentAt('TXA', {
      1: '1',
      2: components(doc.typeCode, doc.label),
      3: 'AP',
      4: at,
      12: components(doc.documentId),
      16: doc.filename ? components(doc.filename) : undefined,
      17: 'AU',
    });
    const obx = segmentAt('OBX', { 1: '1', 2: 'ED', 3: components(doc.typeCode, doc.label), 5: ed(doc.pdf), 11: 'F' });
    return message(h, segment('EVN', 'T02', at), pid(ctx, patient), pv1(), txa, obx).toString();
  });
}

export function labResultMessage(ctx: OutboundContext, doc: Omit<FiledDocument, 'filename'>, patient: PatientIds): QueuedMessage {
  return queued(ctx, 'ORU^R01^ORU_R01', patientKey(patient), (h) => {
    const at = hl7Time(h.at);
    const obr = segmentAt('OBR', { 1: '1', 3: components(doc.documentId), 4: components('', doc.label), 7: at, 22: at, 25: 'F' });
    const obx = segmentAt('OBX', { 1: '1', 2: 'ED', 3: components(doc.typeCode, doc.label), 5: ed(doc.pdf), 11: 'F' });
    return message(h, pid(ctx, patient), pv1(), obr, obx).toString();
  });
}
