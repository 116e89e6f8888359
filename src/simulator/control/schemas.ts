// The bodies of the control API's routes (../control-api.ts), named for src/openapi/simulator-control.ts.
// Every body is a strict object, nested ones too: see ../control-body.ts.
import { z } from 'zod';
import { EVENT_TYPES } from '../../contract/events.ts';
import { isHhMm, isValidTimeZone } from '../quiet-hours.ts';

const hhmm = z.string().refine(isHhMm, 'HH:MM');
/** Index 0 is Sunday, as Date.getUTCDay counts. */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const rosterEntry = z.strictObject({
  serviceId: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . and -, at most 64'),
  name: z.string().min(1).max(200),
});
/** A clinic's fixed doctors and locations, under the service ids given: an appointment naming none takes them. */
export const rosterSchema = z.strictObject({ doctors: z.array(rosterEntry).min(1).max(100), locations: z.array(rosterEntry).min(1).max(100) });
/** When a clinic sees patients, in its time zone: an appointment given no start takes the first free one. */
export const appointmentHoursSchema = z
  .strictObject({
    days: z.array(z.enum(WEEKDAYS)).min(1),
    opens: hhmm,
    closes: hhmm,
    slotMinutes: z.number().int().min(5).max(720),
  })
  .refine((h) => h.opens < h.closes, { message: 'must be after opens', path: ['closes'] });
export const clinicSchema = z.strictObject({
  timeZone: z.string().refine(isValidTimeZone, 'an IANA time zone').default('UTC'),
  quietHours: z.strictObject({ start: hhmm.default('21:00'), end: hhmm.default('08:00') }).default({ start: '21:00', end: '08:00' }),
  autoSend: z
    .strictObject({ lab_report: z.boolean().default(true), prescription: z.boolean().default(false) })
    .default({ lab_report: true, prescription: false }),
  roster: rosterSchema.optional(),
  appointmentHours: appointmentHoursSchema.optional(),
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
