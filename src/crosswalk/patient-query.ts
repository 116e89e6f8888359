// What the EMR is searched by for a patient's suggestions: the crosswalk keeps no patient name (patient data stays
// in the sealed event bodies), so the name and phone come from the snapshot of the newest event waiting for that
// patient, read when a person asks and never kept or logged.
import type { Patient } from '../contract/events.ts';
import type { CrosswalkStore } from '../storage/crosswalk.ts';
import type { LackedRecord, ProcessingQueue } from '../storage/processing.ts';

export interface PatientQueryDeps {
  store: Pick<CrosswalkStore, 'newestWaiter'>;
  queue: Pick<ProcessingQueue, 'event'>;
}

/** The patient's name and phone as the newest waiting event gave them; undefined when no event waits for it (or its body is gone). */
export async function patientQuery(deps: PatientQueryDeps, record: LackedRecord): Promise<{ name: string; phone: string } | undefined> {
  const inboxId = await deps.store.newestWaiter(record);
  if (inboxId === undefined) return undefined;
  const parsed = await deps.queue.event(inboxId);
  // Appointment events and patient.created carry the patient's snapshot; a document event names none.
  const patient = parsed.ok && 'patient' in parsed.event ? (parsed.event.patient as Patient) : undefined;
  if (!patient || patient.serviceId !== record.serviceId) return undefined;
  return { name: patient.name, phone: patient.phone };
}
