// ADT^A28/A04 (a new patient) and ADT^A31/A08 (a change) as the EMR applies them: the first time it sees a
// service id it assigns an MRN; later it updates name and phone. Either way the notification (A28 for a new
// patient, A31 for a change, both ids in PID-3) goes into the same commit.
import type { Hl7Message } from '@medplum/core';
import type { Refusal } from './ack.ts';
import type { EmrPatient } from './model.ts';
import { type OutboundContext, patientNotification } from './outbound.ts';
import { patientOf } from './pid.ts';
import type { Commit, EmrState } from './state.ts';

export interface IntakeContext {
  state: EmrState;
  assigningAuthority: string;
  /** Absent when there is no notify target: nothing is queued. */
  outbound?: OutboundContext;
}

export function applyPatient(ctx: IntakeContext, msg: Hl7Message): Commit | Refusal {
  const received = patientOf(msg, ctx.assigningAuthority);
  if (!received.serviceId) return { field: 'PID-3', code: '101', text: `no patient identifier under assigning authority ${ctx.assigningAuthority} (type PI)` };
  const existing = ctx.state.patient(received.serviceId);
  if (!existing) {
    const patient: EmrPatient = { serviceId: received.serviceId, mrn: ctx.state.nextMrn(), name: received.name, phone: received.phone };
    return { patients: [patient], queued: ctx.outbound ? [patientNotification(ctx.outbound, 'A28', patient)] : [] };
  }
  // An update that leaves a field out keeps what the EMR has.
  const patient: EmrPatient = { ...existing, name: received.name || existing.name, phone: received.phone || existing.phone };
  if (patient.name === existing.name && patient.phone === existing.phone) return {};
  return { patients: [patient], queued: ctx.outbound ? [patientNotification(ctx.outbound, 'A31', patient)] : [] };
}
