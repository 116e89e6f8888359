// Booking as Oracle Health Millennium's R4 API documents it (Create an appointment, Patch an appointment): an
// Appointment is created with status booked, exactly one `slot` naming a free Slot and exactly one participant, the
// Patient, accepted, with no type; the Slot becomes busy in the same request, and the Appointment takes the Slot's
// start and end. A change (./changes.ts applies the JSON Patch) may move a booked Appointment to another free Slot
// (the old one is freed) or take its status along the ways below; a cancelled appointment frees its Slot, a
// fulfilled or no-show one keeps it. Anything else is refused with 422, a Slot already taken with 409, each with an
// OperationOutcome saying why. The Slot is made busy before the Appointment is written: a crash between the two
// leaves a Slot busy with no appointment (a person frees it), never one Slot booked twice.
import type { Appointment, Patient, Slot } from '@medplum/fhirtypes';
import type { FhirAnswer } from '../fhir-handler.ts';
import { refuse } from './answers.ts';
import type { Records, Stored } from './records.ts';

/**
 * Where a status may go. Millennium documents booked → arrived, checked-in or cancelled; arrived → checked-in or
 * cancelled; checked-in → fulfilled or cancelled. This server also takes fulfilled and noshow from each of them,
 * which a writer that reports what happened at the clinic needs. Cancelled, fulfilled and noshow are final.
 */
const NEXT_STATUS: Readonly<Record<string, readonly string[]>> = {
  booked: ['arrived', 'checked-in', 'cancelled', 'fulfilled', 'noshow'],
  arrived: ['checked-in', 'cancelled', 'fulfilled', 'noshow'],
  'checked-in': ['cancelled', 'fulfilled', 'noshow'],
};

const SLOT_REF = /^Slot\/([A-Za-z0-9\-.]{1,64})$/;
const PATIENT_REF = /^Patient\/([A-Za-z0-9\-.]{1,64})$/;

const slotIdOf = (a: Appointment): string | undefined => (a.slot?.length === 1 ? SLOT_REF.exec(a.slot[0]?.reference ?? '')?.[1] : undefined);
const patientIdOf = (a: Appointment): string | undefined => PATIENT_REF.exec(a.participant?.[0]?.actor?.reference ?? '')?.[1];
const sameInstant = (a: string | undefined, b: string | undefined): boolean => a !== undefined && b !== undefined && Date.parse(a) === Date.parse(b);

/** What the Slot and the participant must be, on a create and after every change. */
function shapeProblems(a: Appointment): string[] {
  const problems: string[] = [];
  if (!slotIdOf(a)) problems.push(`slot must hold exactly one reference to a Slot (Slot/{id}); it holds ${a.slot?.length ?? 0}`);
  const participant = a.participant?.[0];
  if (a.participant?.length !== 1 || !patientIdOf(a))
    problems.push(`participant must hold exactly one participant, the Patient (actor Patient/{id}); it holds ${a.participant?.length ?? 0}`);
  else {
    if (participant?.status !== 'accepted') problems.push(`the patient participant's status must be accepted, not ${participant?.status ?? 'absent'}`);
    if (participant?.type?.length) problems.push("the patient participant's type must not be set");
  }
  return problems;
}

function refuseAll(what: string, problems: (string | undefined)[]): void {
  const found = problems.filter((p): p is string => p !== undefined);
  if (found.length) refuse(422, 'business-rule', `${what}: ${found.join('; ')}`);
}

/** Start and end given by the client must be the Slot's; left out, they are taken from it. */
function timeProblems(a: Appointment, slot: Slot, also?: Appointment): (string | undefined)[] {
  const fits = (asked: string | undefined, slotTime: string, before: string | undefined) =>
    asked === undefined || sameInstant(asked, slotTime) || sameInstant(asked, before);
  return [
    fits(a.start, slot.start, also?.start) ? undefined : `start ${a.start} is not its Slot's (${slot.start})`,
    fits(a.end, slot.end, also?.end) ? undefined : `end ${a.end} is not its Slot's (${slot.end})`,
  ];
}

async function existingSlot(records: Records, what: string, id: string): Promise<Stored<Slot>> {
  return (await records.read<Slot>('Slot', id)) ?? refuse(422, 'business-rule', `${what}: Slot/${id} does not exist`);
}

function mustBeFree(what: string, slot: Stored<Slot>): void {
  if (slot.status !== 'free') refuse(409, 'conflict', `${what}: Slot/${slot.id} is ${slot.status}, not free: it takes no booking`);
}

/** Frees the Slot an appointment held, unless something else (a staff edit) made it other than busy. */
async function release(records: Records, id: string): Promise<void> {
  const slot = await records.read<Slot>('Slot', id);
  if (slot?.status === 'busy') await records.write({ ...slot, status: 'free' });
}

/** Makes the Slot busy, writes what depends on it, and gives the Slot back if that write fails. */
async function holding<R>(records: Records, slot: Stored<Slot>, write: () => Promise<R>): Promise<R> {
  const busy = await records.write({ ...slot, status: 'busy' });
  try {
    return await write();
  } catch (err) {
    await records.write({ ...slot, meta: busy.meta });
    throw err;
  }
}

/** POST Appointment: undefined when the body is not an Appointment (the store answers that as for any type). */
export async function bookAppointment(records: Records, body: unknown): Promise<FhirAnswer | undefined> {
  const asked = body as Appointment | undefined;
  if (asked?.resourceType !== 'Appointment') return undefined;
  const what = 'Appointment';
  refuseAll(what, [
    asked.status === 'booked' ? undefined : `status must be booked (this server books into a Slot), not ${asked.status ?? 'absent'}`,
    ...shapeProblems(asked),
  ]);
  const slot = await existingSlot(records, what, slotIdOf(asked)!);
  const patient = await records.read<Patient>('Patient', patientIdOf(asked)!);
  refuseAll(what, [patient ? undefined : `Patient/${patientIdOf(asked)} does not exist`, ...timeProblems(asked, slot)]);
  mustBeFree(what, slot);
  // A client's id and meta are not a create's to choose.
  const { id: _id, meta: _meta, ...appointment } = asked;
  return holding(records, slot, () => records.create<Appointment>({ ...appointment, start: slot.start, end: slot.end }));
}

/** A patched Appointment (`after`) written under the rules, with what it does to its Slots. */
export async function changeAppointment(records: Records, before: Stored<Appointment>, after: Stored<Appointment>): Promise<Stored<Appointment>> {
  const what = `Appointment/${before.id}`;
  const moves = NEXT_STATUS[before.status] ?? [];
  refuseAll(what, [
    ...shapeProblems(after),
    patientIdOf(after) === patientIdOf(before) ? undefined : 'its patient does not change',
    after.status === before.status || moves.includes(after.status)
      ? undefined
      : `its status goes from ${before.status} to ${moves.join(', ') || 'nothing (it is final)'}, not to ${after.status}`,
  ]);
  const [from, to] = [slotIdOf(before), slotIdOf(after)!];
  if (from === to) {
    refuseAll(what, [
      sameInstant(after.start, before.start) && sameInstant(after.end, before.end) ? undefined : "start and end are its Slot's: replace /slot to move it",
    ]);
    const written = await records.write(after);
    if (after.status === 'cancelled' && before.status !== 'cancelled') await release(records, to);
    return written;
  }
  refuseAll(what, [
    before.status === 'booked' && after.status === 'booked' ? undefined : 'only a booked appointment moves to another Slot, and it stays booked in that change',
  ]);
  const slot = await existingSlot(records, what, to);
  refuseAll(what, timeProblems(after, slot, before));
  mustBeFree(what, slot);
  const written = await holding(records, slot, () => records.write({ ...after, start: slot.start, end: slot.end }));
  if (from) await release(records, from);
  return written;
}
