// What the EMR does with a message it takes: a message it has already applied (same MSH-3, MSH-4, MSH-10) is
// acknowledged AA again and nothing more; ADT and SIU go to their appliers; anything else, or a message
// missing what it needs, is refused AE naming the field. What a message changes, its notifications and its
// key are committed together, before the acknowledgment.
import type { Hl7Message } from '@medplum/core';
import type { Refusal } from './ack.ts';
import { APPOINTMENT_TRIGGERS, applyAppointment } from './appointment-intake.ts';
import { headerOf } from './hl7-text.ts';
import type { AppointmentTrigger } from './outbound.ts';
import { applyPatient, type IntakeContext } from './patient-intake.ts';
import type { Commit } from './state.ts';

export type { IntakeContext } from './patient-intake.ts';

export type IntakeResult = { code: 'AA'; duplicate: boolean; commit: Commit } | { code: 'AE'; refusal: Refusal };

const PATIENT_TRIGGERS = ['A28', 'A04', 'A31', 'A08'];

function route(ctx: IntakeContext, msg: Hl7Message, type: string, trigger: string): Commit | Refusal {
  if (type === 'ADT') {
    if (PATIENT_TRIGGERS.includes(trigger)) return applyPatient(ctx, msg);
    return { field: 'MSH-9', code: '201', text: `ADT^${trigger} is not taken here (A28, A04, A31, A08 are)` };
  }
  if (type === 'SIU') {
    if (APPOINTMENT_TRIGGERS.includes(trigger)) return applyAppointment(ctx, trigger as AppointmentTrigger, msg);
    return { field: 'MSH-9', code: '201', text: `SIU^${trigger} is not taken here (S12 to S15 are)` };
  }
  return { field: 'MSH-9', code: '200', text: `message type ${type || '(none)'} is not taken here (ADT and SIU are)` };
}

/**
 * Applies `msg` (committing what it changes) and says how to acknowledge it. It never awaits: with messages
 * arriving on several connections at once, each is read, numbered (MRN, filler id) and committed in one step.
 */
export function takeMessage(ctx: IntakeContext, msg: Hl7Message): IntakeResult {
  const h = headerOf(msg);
  if (!h.controlId) return { code: 'AE', refusal: { field: 'MSH-10', code: '101', text: 'no message control id' } };
  const key = `${h.sender.application}|${h.sender.facility}|${h.controlId}`;
  if (ctx.state.isApplied(key)) return { code: 'AA', duplicate: true, commit: {} };
  const result = route(ctx, msg, h.type, h.trigger);
  if ('field' in result) return { code: 'AE', refusal: result };
  const commit: Commit = { ...result, applied: [key] };
  ctx.state.commit(commit);
  return { code: 'AA', duplicate: false, commit };
}
