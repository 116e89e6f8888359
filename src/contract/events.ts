// The nine webhook event types of docs/service-interface.md (and docs/decisions.md#patient-created-body,
// docs/decisions.md#document-event-bodies for the bodies the interface leaves open), as zod schemas. The
// simulator builds events that pass these; the processor parses with them; samples/schemas/*.json are
// generated from them. Objects are loose (extra keys kept) and enumerations open (an unknown value is kept,
// not rejected), as docs/decisions.md#open-enumerations and docs/decisions.md#required-fields-and-extra-keys
// decide.
import { z } from 'zod';

/** Values seen or fixed by docs/decisions.md#open-enumerations; others are accepted and passed on. */
export const APPOINTMENT_STATUSES = ['Approved', 'Pending', 'Cancelled', 'Completed', 'NoShow'] as const;
export const APPOINTMENT_MODES = ['Offline', 'Online'] as const;
export const PAYMENT_TYPES = ['Full', 'Partial', 'Unpaid'] as const;

const openEnum = (known: readonly string[], what: string) =>
  z
    .string()
    .min(1)
    .describe(`${what}; known values: ${known.join(', ')}. Others are kept.`);

const isoUtc = z.string().datetime({ offset: false, precision: 3 });
const isoWithOffset = z.string().datetime({ offset: true });
const nullableId = z.string().min(1).nullable();

export const doctorSchema = z.looseObject({ serviceId: z.string().min(1), externalId: nullableId, name: z.string() });
export const patientSchema = z.looseObject({
  serviceId: z.string().min(1),
  externalId: nullableId,
  name: z.string(),
  phone: z.string(),
});
export const locationSchema = z.looseObject({ serviceId: z.string().min(1), externalId: nullableId, name: z.string() });

export const paymentSchema = z.looseObject({
  type: openEnum(PAYMENT_TYPES, 'payment type'),
  amountPaid: z.number(),
  balanceDue: z.number(),
  currency: z.string().min(3).max(3),
  payAtClinic: z.boolean(),
});

export const appointmentSchema = z.looseObject({
  serviceId: z.string().min(1),
  externalId: nullableId,
  startsAt: isoUtc,
  startsAtLocal: isoWithOffset,
  mode: openEnum(APPOINTMENT_MODES, 'appointment mode'),
  status: openEnum(APPOINTMENT_STATUSES, 'appointment status'),
  token: z.string(),
  notes: z.string(),
  payment: paymentSchema,
});

export const APPOINTMENT_EVENT_TYPES = [
  'appointment.created',
  'appointment.rescheduled',
  'appointment.cancelled',
  'appointment.completed',
  'appointment.no_show',
  'appointment.payment_updated',
] as const;
export const DOCUMENT_EVENT_TYPES = ['document.delivered', 'document.failed'] as const;
export const EVENT_TYPES = [...APPOINTMENT_EVENT_TYPES, 'patient.created', ...DOCUMENT_EVENT_TYPES] as const;

export type AppointmentEventType = (typeof APPOINTMENT_EVENT_TYPES)[number];
export type DocumentEventType = (typeof DOCUMENT_EVENT_TYPES)[number];
export type EventType = (typeof EVENT_TYPES)[number];

const envelope = {
  eventId: z.uuid(),
  occurredAt: isoUtc,
  clinicId: z.string().min(1),
};

export const appointmentEventSchema = z.looseObject({
  ...envelope,
  eventType: z.enum(APPOINTMENT_EVENT_TYPES),
  appointment: appointmentSchema,
  doctor: doctorSchema,
  patient: patientSchema,
  location: locationSchema,
});

export const patientCreatedEventSchema = z.looseObject({
  ...envelope,
  eventType: z.literal('patient.created'),
  patient: patientSchema,
});

export const DOCUMENT_TYPES = ['lab_report', 'prescription'] as const;
export const DOCUMENT_STATUSES = ['SENT', 'HELD', 'FAILED', 'SUPPRESSED'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

export const documentEventSchema = z.looseObject({
  ...envelope,
  eventType: z.enum(DOCUMENT_EVENT_TYPES),
  document: z.looseObject({
    serviceId: z.string().min(1),
    externalId: z.string().min(1),
    documentType: z.enum(DOCUMENT_TYPES),
    patientServiceId: z.string().min(1),
    status: z.enum(DOCUMENT_STATUSES),
    statusReason: z.string().optional(),
    sentAt: isoUtc.optional(),
  }),
});

export const webhookEventSchema = z.discriminatedUnion('eventType', [appointmentEventSchema, patientCreatedEventSchema, documentEventSchema]);

export type AppointmentEvent = z.infer<typeof appointmentEventSchema>;
export type PatientCreatedEvent = z.infer<typeof patientCreatedEventSchema>;
export type DocumentEvent = z.infer<typeof documentEventSchema>;
export type WebhookEvent = z.infer<typeof webhookEventSchema>;
export type Appointment = z.infer<typeof appointmentSchema>;
export type Payment = z.infer<typeof paymentSchema>;
export type Doctor = z.infer<typeof doctorSchema>;
export type Patient = z.infer<typeof patientSchema>;
export type Location = z.infer<typeof locationSchema>;

/** The schema of one event type, for per-type JSON Schemas and validation. */
export function schemaForEventType(type: EventType) {
  if ((APPOINTMENT_EVENT_TYPES as readonly string[]).includes(type)) return appointmentEventSchema;
  if (type === 'patient.created') return patientCreatedEventSchema;
  return documentEventSchema;
}

export const isEventType = (v: unknown): v is EventType => typeof v === 'string' && (EVENT_TYPES as readonly string[]).includes(v);
