// Control routes for patients and appointments "from any channel": booking, rescheduling, status changes and
// payment changes, each sending its event; doctors, patients and locations are made when a body does not name them,
// except in a clinic with a roster, whose own doctors and locations an appointment then takes. A clinic with
// appointment hours places an appointment given no start at the first of its starts a day ahead at which the doctor
// is free (../appointment-hours.ts).
import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import type { z } from 'zod';
import { toIso } from '../../clock.ts';
import type { AppointmentEventType } from '../../contract/events.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { noFields, readControlBody } from '../control-body.ts';
import { newServiceId } from '../documents.ts';
import { appointmentEvent, appointmentSnapshot, patientCreatedEvent } from '../events.ts';
import type { Simulator } from '../simulator.ts';
import { firstFreeStart } from '../appointment-hours.ts';
import type { Clinic, Person, SimAppointment, Store } from '../store.ts';
import { clinicOf } from './clinics.ts';
import { appointmentBody, patientBody, paymentChangeBody, paymentSchema, type personSchema, rescheduleBody } from './schemas.ts';

type PersonKind = 'doctor' | 'patient' | 'location';

const counter = () => randomBytes(2).readUInt16BE(0) % 1000;
const syntheticPhone = () => `+1555${String(randomBytes(3).readUIntBE(0, 3) % 10_000_000).padStart(7, '0')}`;

/** The person a body names by serviceId (of the clinic), else a new one made from what it gives. */
function person(sim: Simulator, kind: PersonKind, clinicId: string, given: z.infer<typeof personSchema> | undefined): Person {
  const { store, clock } = sim;
  if (given?.serviceId) {
    const found = store.get(kind, given.serviceId);
    if (!found || found.clinicId !== clinicId) throw new ValidationError(`${kind}.serviceId: unknown ${kind}`, `${kind}.serviceId`);
    return found;
  }
  const n = counter();
  const p: Person = {
    id: newServiceId(kind === 'doctor' ? 'doc' : kind === 'patient' ? 'pat' : 'loc'),
    clinicId,
    externalId: null,
    name: given?.name ?? (kind === 'doctor' ? `Dr Synthetic ${n}` : kind === 'patient' ? `Synthetic Patient ${n}` : `Room ${n}`),
    ...(kind === 'patient' ? { phone: given?.phone ?? syntheticPhone() } : {}),
  };
  store.put(kind, p);
  if (kind === 'patient') sim.emit(patientCreatedEvent(p, clock.now()));
  return p;
}

function appointmentOf(store: Store, id: string): SimAppointment {
  const a = store.get('appointment', id);
  if (!a) throw new NotFoundError('no such appointment');
  return a;
}

/** Stores the appointment, sends its event, and answers it as the event carries it. */
function change(sim: Simulator, a: SimAppointment, type: AppointmentEventType) {
  sim.store.put('appointment', a);
  sim.emit(appointmentEvent(sim.store, type, a, sim.clock.now()));
  return { serviceId: a.id, ...appointmentSnapshot(sim.store, a) };
}

/** A day ahead: when an appointment given no start takes place (in a clinic with hours: its first free start from then). */
const AHEAD_MS = 24 * 3600_000;

/** The times each doctor of the clinic is booked at (cancelled appointments free theirs): `doctorId|epoch ms`. */
function busyTimes(store: Store, clinicId: string): Set<string> {
  const busy = store.list('appointment', clinicId).filter((a) => a.status !== 'Cancelled');
  return new Set(busy.map((a) => `${a.doctorId}|${Date.parse(a.startsAt)}`));
}

/**
 * The doctor (of `doctors`, tried in order) and start of a new appointment: the start given, with the first doctor
 * free then; else a day ahead, or in a clinic with appointment hours the first start from then at which one is free.
 */
function place(sim: Simulator, clinic: Clinic, doctors: string[], startsAt: string | undefined): { doctorId: string; startsAt: string } {
  const busy = busyTimes(sim.store, clinic.id);
  const isBusy = (doctorId: string, at: number) => busy.has(`${doctorId}|${at}`);
  const fixed = startsAt === undefined ? undefined : Date.parse(startsAt);
  if (fixed !== undefined || !clinic.appointmentHours) {
    const at = fixed ?? sim.clock.now() + AHEAD_MS;
    return { doctorId: doctors.find((d) => !isBusy(d, at)) ?? doctors[0]!, startsAt: toIso(at) };
  }
  const free = firstFreeStart(clinic.appointmentHours, clinic.timeZone, sim.clock.now() + AHEAD_MS, doctors, isBusy);
  if (!free) throw new ValidationError("no free time in the clinic's appointment hours within a year: give startsAt", 'startsAt');
  return { doctorId: free.doctorId, startsAt: toIso(free.start) };
}

/** The roster's location for a roster doctor: the one at its index (wrapping), so a doctor keeps one room. */
function rosterLocation(roster: NonNullable<Clinic['roster']>, doctorId: string): string {
  const index = Math.max(
    0,
    roster.doctors.findIndex((d) => d.serviceId === doctorId),
  );
  return roster.locations[index % roster.locations.length]!.serviceId;
}

function book(sim: Simulator, clinic: Clinic, b: z.infer<typeof appointmentBody>): SimAppointment {
  const { roster } = clinic;
  const doctors = b.doctor || !roster ? [person(sim, 'doctor', b.clinicId, b.doctor).id] : roster.doctors.map((d) => d.serviceId);
  const placed = place(sim, clinic, doctors, b.startsAt);
  const patientId = person(sim, 'patient', b.clinicId, b.patient).id;
  return {
    id: newServiceId('apt'),
    clinicId: b.clinicId,
    externalId: null,
    startsAt: placed.startsAt,
    mode: b.mode,
    status: b.status,
    token: `T-${counter()}`,
    notes: b.notes,
    payment: paymentSchema.parse(b.payment ?? {}),
    doctorId: placed.doctorId,
    patientId,
    locationId: b.location || !roster ? person(sim, 'location', b.clinicId, b.location).id : rosterLocation(roster, placed.doctorId),
  };
}

export function patientRoutes(router: Router, sim: Simulator): void {
  router.post('/patients', async (ctx) => {
    const b = await readControlBody(ctx.req, patientBody);
    clinicOf(sim.store, b.clinicId);
    const p = person(sim, 'patient', b.clinicId, b);
    ctx.status = 201;
    ctx.body = { serviceId: p.id, externalId: p.externalId, name: p.name, phone: p.phone };
  });
}

export function appointmentRoutes(router: Router, sim: Simulator): void {
  const { store } = sim;
  router.post('/appointments', async (ctx) => {
    const b = await readControlBody(ctx.req, appointmentBody);
    const clinic = clinicOf(store, b.clinicId);
    ctx.status = 201;
    ctx.body = change(sim, book(sim, clinic, b), 'appointment.created');
  });
  router.post('/appointments/:id/reschedule', async (ctx) => {
    const b = await readControlBody(ctx.req, rescheduleBody);
    const a = appointmentOf(store, ctx.params.id!);
    ctx.body = change(
      sim,
      {
        ...a,
        ...(b.startsAt ? { startsAt: toIso(Date.parse(b.startsAt)) } : {}),
        ...(b.mode ? { mode: b.mode } : {}),
        ...(b.location ? { locationId: person(sim, 'location', a.clinicId, b.location).id } : {}),
      },
      'appointment.rescheduled',
    );
  });
  const statusChange = (path: string, status: string, type: AppointmentEventType) =>
    router.post(`/appointments/:id/${path}`, async (ctx) => {
      await readControlBody(ctx.req, noFields);
      ctx.body = change(sim, { ...appointmentOf(store, ctx.params.id!), status }, type);
    });
  statusChange('cancel', 'Cancelled', 'appointment.cancelled');
  statusChange('complete', 'Completed', 'appointment.completed');
  statusChange('no-show', 'NoShow', 'appointment.no_show');
  router.post('/appointments/:id/payment', async (ctx) => {
    const a = appointmentOf(store, ctx.params.id!);
    const b = await readControlBody(ctx.req, paymentChangeBody);
    ctx.body = change(sim, { ...a, payment: { ...a.payment, ...b } }, 'appointment.payment_updated');
  });
  router.get('/appointments/:id', (ctx) => {
    ctx.body = { serviceId: ctx.params.id, ...appointmentSnapshot(store, appointmentOf(store, ctx.params.id!)) };
  });
}
