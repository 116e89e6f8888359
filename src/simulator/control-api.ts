// The simulator's control API (/_sim/, docs/simulator.md): what tests, QA and the demo use to play the
// service's other side — clinics, keys, subscriptions, appointments and patients "from any channel",
// a clinic person's release, the clock, faults, and what happened (deliveries, messages, alerts).
import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import { z, type ZodType } from 'zod';
import { toIso } from '../clock.ts';
import { EVENT_TYPES, type AppointmentEventType } from '../contract/events.ts';
import type { Db } from '../database/open.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { noFields, readControlBody } from './control-body.ts';
import { newServiceId } from './documents.ts';
import { appointmentEvent, appointmentSnapshot, patientCreatedEvent } from './events.ts';
import { faultsSchema } from './faults.ts';
import { isHhMm, isValidTimeZone } from './quiet-hours.ts';
import type { Simulator } from './simulator.ts';
import type { Clinic, Person, SimAppointment } from './store.ts';

const body = <T>(req: import('node:http').IncomingMessage, schema: ZodType<T>) => readControlBody(req, schema);

const hhmm = z.string().refine(isHhMm, 'HH:MM');
// Every body is a strict object, nested ones too: see ./control-body.ts.
export const clinicSchema = z.strictObject({
  timeZone: z.string().refine(isValidTimeZone, 'an IANA time zone').default('UTC'),
  quietHours: z.strictObject({ start: hhmm.default('21:00'), end: hhmm.default('08:00') }).default({ start: '21:00', end: '08:00' }),
  autoSend: z
    .strictObject({ lab_report: z.boolean().default(true), prescription: z.boolean().default(false) })
    .default({ lab_report: true, prescription: false }),
});
export const personSchema = z.strictObject({ serviceId: z.string().optional(), name: z.string().min(1).optional(), phone: z.string().min(1).optional() });
export const paymentSchema = z.strictObject({
  type: z.string().min(1).default('Unpaid'),
  amountPaid: z.number().default(0),
  balanceDue: z.number().default(50),
  currency: z.string().length(3).default('EUR'),
  payAtClinic: z.boolean().default(true),
});
const iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'an ISO 8601 time');
// The bodies of the routes below, named for src/openapi/simulator-control.ts.
export const keyBody = z.strictObject({ clinicId: z.string(), mode: z.enum(['live', 'sandbox']).default('live') });
export const subscriptionBody = z.strictObject({
  clinicId: z.string(),
  url: z.url({ protocol: /^https?$/ }),
  eventTypes: z
    .array(z.enum(EVENT_TYPES))
    .min(1)
    .default([...EVENT_TYPES]),
});
export const patientBody = personSchema.omit({ serviceId: true }).extend({ clinicId: z.string() });
export const appointmentBody = z.strictObject({
  clinicId: z.string(),
  startsAt: iso.optional(),
  mode: z.string().min(1).default('Offline'),
  status: z.string().min(1).default('Approved'),
  notes: z.string().default(''),
  doctor: personSchema.optional(),
  patient: personSchema.optional(),
  location: personSchema.optional(),
  payment: paymentSchema.optional(),
});
export const rescheduleBody = z.strictObject({ startsAt: iso.optional(), mode: z.string().min(1).optional(), location: personSchema.optional() });
export const paymentChangeBody = paymentSchema.partial();
export const clockAdvanceBody = z.strictObject({
  seconds: z
    .number()
    .min(0)
    .max(366 * 24 * 3600),
});

export function createControlRouter(sim: Simulator, db: Db): Router {
  const { store, clock } = sim;
  const router = new Router({ prefix: '/_sim' });
  const counter = () => randomBytes(2).readUInt16BE(0) % 1000;

  function person(kind: 'doctor' | 'patient' | 'location', clinicId: string, given: z.infer<typeof personSchema> | undefined): Person {
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
      ...(kind === 'patient' ? { phone: given?.phone ?? `+1555${String(randomBytes(3).readUIntBE(0, 3) % 10_000_000).padStart(7, '0')}` } : {}),
    };
    store.put(kind, p);
    if (kind === 'patient') sim.emit(patientCreatedEvent(p, clock.now()));
    return p;
  }
  const clinicOf = (clinicId: string): Clinic => {
    const c = store.get('clinic', clinicId);
    if (!c) throw new ValidationError('clinicId: unknown clinic', 'clinicId');
    return c;
  };
  const appointmentOf = (id: string): SimAppointment => {
    const a = store.get('appointment', id);
    if (!a) throw new NotFoundError('no such appointment');
    return a;
  };
  const change = (a: SimAppointment, type: AppointmentEventType) => {
    store.put('appointment', a);
    sim.emit(appointmentEvent(store, type, a, clock.now()));
    return { serviceId: a.id, ...appointmentSnapshot(store, a) };
  };

  router.post('/clinics', async (ctx) => {
    const c = await body(ctx.req, clinicSchema);
    const clinic: Clinic = { id: newServiceId('clinic'), ...c };
    store.put('clinic', clinic);
    ctx.status = 201;
    ctx.body = { clinicId: clinic.id, ...c };
  });
  router.post('/keys', async (ctx) => {
    const b = await body(ctx.req, keyBody);
    clinicOf(b.clinicId);
    const key = `${b.mode}_${randomBytes(16).toString('hex')}`;
    store.put('key', { id: key, clinicId: b.clinicId, mode: b.mode });
    ctx.status = 201;
    ctx.body = { key, mode: b.mode };
  });
  router.post('/subscriptions', async (ctx) => {
    const b = await body(ctx.req, subscriptionBody);
    clinicOf(b.clinicId);
    const sub = {
      id: newServiceId('sub'),
      clinicId: b.clinicId,
      url: b.url,
      eventTypes: b.eventTypes,
      keyId: `key_${randomBytes(8).toString('hex')}`,
      secrets: [`whsec_${randomBytes(24).toString('base64url')}`],
      paused: false,
      consecutiveFailures: 0,
    };
    store.put('subscription', sub);
    ctx.status = 201;
    ctx.body = { id: sub.id, keyId: sub.keyId, signingSecret: sub.secrets[0] };
  });
  const subscriptionOf = (id: string) => {
    const s = store.get('subscription', id);
    if (!s) throw new NotFoundError('no such subscription');
    return s;
  };
  const subscriptionState = (id: string) => {
    const s = subscriptionOf(id);
    return {
      id: s.id,
      clinicId: s.clinicId,
      url: s.url,
      eventTypes: s.eventTypes,
      keyId: s.keyId,
      paused: s.paused,
      consecutiveFailures: s.consecutiveFailures,
      queued: sim.dispatcher.queued(s.id),
      activeSecrets: s.secrets.length,
    };
  };
  router.get('/subscriptions/:id', (ctx) => {
    ctx.body = subscriptionState(ctx.params.id!);
  });
  router.post('/subscriptions/:id/resume', async (ctx) => {
    await body(ctx.req, noFields);
    store.put('subscription', { ...subscriptionOf(ctx.params.id!), paused: false, consecutiveFailures: 0 });
    await sim.runDue();
    ctx.body = subscriptionState(ctx.params.id!);
  });
  router.post('/subscriptions/:id/rotate-secret', async (ctx) => {
    await body(ctx.req, noFields);
    const s = subscriptionOf(ctx.params.id!);
    const secret = `whsec_${randomBytes(24).toString('base64url')}`;
    store.put('subscription', { ...s, secrets: [secret, ...s.secrets] });
    sim.secretsChanged(s.id, [secret, ...s.secrets]);
    ctx.body = { signingSecret: secret, activeSecrets: s.secrets.length + 1 };
  });
  router.post('/subscriptions/:id/retire-secrets', async (ctx) => {
    await body(ctx.req, noFields);
    const s = subscriptionOf(ctx.params.id!);
    store.put('subscription', { ...s, secrets: s.secrets.slice(0, 1) });
    sim.secretsChanged(s.id, s.secrets.slice(0, 1));
    ctx.body = { activeSecrets: 1 };
  });

  router.post('/patients', async (ctx) => {
    const b = await body(ctx.req, patientBody);
    clinicOf(b.clinicId);
    const p = person('patient', b.clinicId, b);
    ctx.status = 201;
    ctx.body = { serviceId: p.id, externalId: p.externalId, name: p.name, phone: p.phone };
  });

  router.post('/appointments', async (ctx) => {
    const b = await body(ctx.req, appointmentBody);
    clinicOf(b.clinicId);
    const a: SimAppointment = {
      id: newServiceId('apt'),
      clinicId: b.clinicId,
      externalId: null,
      startsAt: toIso(Date.parse(b.startsAt ?? toIso(clock.now() + 24 * 3600_000))),
      mode: b.mode,
      status: b.status,
      token: `T-${counter()}`,
      notes: b.notes,
      payment: paymentSchema.parse(b.payment ?? {}),
      doctorId: person('doctor', b.clinicId, b.doctor).id,
      patientId: person('patient', b.clinicId, b.patient).id,
      locationId: person('location', b.clinicId, b.location).id,
    };
    ctx.status = 201;
    ctx.body = change(a, 'appointment.created');
  });
  router.post('/appointments/:id/reschedule', async (ctx) => {
    const b = await body(ctx.req, rescheduleBody);
    const a = appointmentOf(ctx.params.id!);
    ctx.body = change(
      {
        ...a,
        ...(b.startsAt ? { startsAt: toIso(Date.parse(b.startsAt)) } : {}),
        ...(b.mode ? { mode: b.mode } : {}),
        ...(b.location ? { locationId: person('location', a.clinicId, b.location).id } : {}),
      },
      'appointment.rescheduled',
    );
  });
  const statusChange = (path: string, status: string, type: AppointmentEventType) =>
    router.post(`/appointments/:id/${path}`, async (ctx) => {
      await body(ctx.req, noFields);
      ctx.body = change({ ...appointmentOf(ctx.params.id!), status }, type);
    });
  statusChange('cancel', 'Cancelled', 'appointment.cancelled');
  statusChange('complete', 'Completed', 'appointment.completed');
  statusChange('no-show', 'NoShow', 'appointment.no_show');
  router.post('/appointments/:id/payment', async (ctx) => {
    const a = appointmentOf(ctx.params.id!);
    const b = await body(ctx.req, paymentChangeBody);
    ctx.body = change({ ...a, payment: { ...a.payment, ...b } }, 'appointment.payment_updated');
  });
  router.get('/appointments/:id', (ctx) => {
    ctx.body = { serviceId: ctx.params.id, ...appointmentSnapshot(store, appointmentOf(ctx.params.id!)) };
  });

  router.post('/documents/:serviceId/release', async (ctx) => {
    await body(ctx.req, noFields);
    const d = await sim.documents.release(ctx.params.serviceId!);
    await sim.runDue();
    ctx.body = { serviceId: d.id, externalId: d.externalId, status: d.status, statusReason: d.statusReason, releaseAfter: d.releaseAfter, sentAt: d.sentAt };
  });

  router.get('/clock', (ctx) => {
    ctx.body = { now: toIso(clock.now()), offsetSeconds: clock.offsetMs() / 1000 };
  });
  router.post('/clock/advance', async (ctx) => {
    const b = await body(ctx.req, clockAdvanceBody);
    await sim.advance(b.seconds * 1000);
    ctx.body = { now: toIso(clock.now()), offsetSeconds: clock.offsetMs() / 1000 };
  });

  const rows = (sql: string, ...args: unknown[]) => db.prepare(sql).all(...args) as Record<string, unknown>[];
  router.get('/deliveries', (ctx) => {
    const sub = typeof ctx.query.subscriptionId === 'string' ? ctx.query.subscriptionId : undefined;
    const list = sub ? rows('SELECT * FROM delivery_log WHERE subscription_id = ? ORDER BY id', sub) : rows('SELECT * FROM delivery_log ORDER BY id');
    ctx.body = list.map((r) => ({
      subscriptionId: r.subscription_id,
      eventId: r.event_id,
      eventType: r.event_type,
      attempt: r.attempt,
      statusCode: r.status_code,
      error: r.error,
      at: toIso(r.at as number),
    }));
  });
  router.get('/messages', (ctx) => {
    const phone = typeof ctx.query.phone === 'string' ? ctx.query.phone : undefined;
    const list = phone ? rows('SELECT * FROM messages WHERE phone = ? ORDER BY id', phone) : rows('SELECT * FROM messages ORDER BY id');
    ctx.body = list.map((r) => ({
      documentServiceId: r.document_id,
      phone: r.phone,
      text: r.text,
      attachment: { name: r.attachment_name, mimeType: r.mime_type, size: r.size, sha256: r.sha256 },
      at: toIso(r.at as number),
    }));
  });
  router.get('/alerts', (ctx) => {
    ctx.body = rows('SELECT * FROM alerts ORDER BY id').map((r) => ({
      kind: r.kind,
      subscriptionId: r.subscription_id,
      eventId: r.event_id,
      message: r.message,
      at: toIso(r.at as number),
    }));
  });
  router.get('/faults', (ctx) => {
    ctx.body = sim.getFaults();
  });
  router.post('/faults', async (ctx) => {
    sim.setFaults(await body(ctx.req, faultsSchema));
    ctx.body = sim.getFaults();
  });
  router.delete('/faults', (ctx) => {
    sim.setFaults({});
    ctx.body = {};
  });
  return router;
}
