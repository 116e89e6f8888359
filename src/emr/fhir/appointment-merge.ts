// An appointment's snapshot applied to the Appointment the EMR holds, changing only the fields emr-bridge owns:
// its identifier under FHIR_IDENTIFIER_SYSTEM, status, start (and end and slot where the snapshot sets them), the
// comment when the service sent notes (one it did not send leaves the staff's), its own extensions (under EXT), and the one participant of each kind it names (the first patient,
// practitioner and location). Whatever the EMR's staff added (notes, their extensions, other participants, other
// identifiers) is kept as it is.
import type { Appointment, AppointmentParticipant, Extension, Identifier } from '@medplum/fhirtypes';
import { EXT } from './mapping.ts';

const OURS = `${EXT}/`;
const ACTOR_TYPES = ['Patient', 'Practitioner', 'Location'] as const;

const actorType = (p: AppointmentParticipant): string | undefined => p.actor?.reference?.split('/')[0];

/** The staff's participants kept; the first of each kind the snapshot names replaced in place by the snapshot's. */
function mergeParticipants(current: AppointmentParticipant[], built: AppointmentParticipant[]): AppointmentParticipant[] {
  const next = [...current];
  for (const type of ACTOR_TYPES) {
    const ours = built.find((p) => actorType(p) === type);
    if (!ours) continue;
    const at = next.findIndex((p) => actorType(p) === type);
    if (at >= 0) next[at] = { ...next[at], ...ours };
    else next.push(ours);
  }
  return next;
}

const mergeExtensions = (current: Extension[] = [], built: Extension[] = []): Extension[] => [...current.filter((e) => !e.url.startsWith(OURS)), ...built];

/** The snapshot's identifiers in place of the current ones of their systems (where those stood), the others kept. */
function mergeIdentifiers(current: Identifier[] = [], built: Identifier[] = []): Identifier[] {
  const bySystem = new Map(built.map((i) => [i.system, i]));
  const next = current.flatMap((i) => {
    if (!bySystem.has(i.system)) return [i];
    const ours = bySystem.get(i.system);
    bySystem.delete(i.system);
    return ours ? [ours] : [];
  });
  return [...next, ...bySystem.values()];
}

/** `current` with the fields emr-bridge owns taken from `built` (an appointment built from the snapshot). */
export function mergeAppointment(current: Appointment, built: Appointment): Appointment {
  return {
    ...current,
    identifier: mergeIdentifiers(current.identifier, built.identifier),
    status: built.status,
    ...(built.start ? { start: built.start } : {}),
    ...(built.end ? { end: built.end } : {}),
    ...(built.slot ? { slot: built.slot } : {}),
    ...(built.comment ? { comment: built.comment } : {}),
    extension: mergeExtensions(current.extension, built.extension),
    participant: mergeParticipants(current.participant ?? [], built.participant ?? []),
  };
}
