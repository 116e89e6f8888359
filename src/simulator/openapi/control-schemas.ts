// The control API's requests and answers (./control.ts), named for components.schemas: the
// requests are the schemas src/simulator/control/ validates with; the answers describe what its routes send.
import { z } from 'zod';
import { ACCEPTED_MIME_TYPES } from '../../contract/documents.ts';
import { appointmentSchema, DOCUMENT_STATUSES, doctorSchema, EVENT_TYPES, locationSchema, patientSchema } from '../../contract/events.ts';
import { noFields } from '../control-body.ts';
import {
  appointmentBody,
  clinicSchema,
  clockAdvanceBody,
  keyBody,
  patientBody,
  paymentChangeBody,
  rescheduleBody,
  subscriptionBody,
} from '../control/schemas.ts';
import { faultsSchema } from '../faults.ts';
import { named } from '../../openapi/describe.ts';

const iso = z.string().describe('ISO 8601 time (UTC)');

const subscriptionState = z.strictObject({
  id: z.string(),
  clinicId: z.string(),
  url: z.string(),
  eventTypes: z.array(z.enum(EVENT_TYPES)),
  keyId: z.string(),
  paused: z.boolean(),
  consecutiveFailures: z.number().int(),
  queued: z.number().int().describe('Deliveries waiting.'),
  activeSecrets: z.number().int(),
});

export const simulatorControlSchemas = {
  noFields: named('NoFields', noFields),
  clinicRequest: named('ClinicRequest', clinicSchema),
  clinic: named('Clinic', clinicSchema.extend({ clinicId: z.string() })),
  keyRequest: named('KeyRequest', keyBody),
  key: named('Key', z.strictObject({ key: z.string().describe('Present it as Authorization: Bearer <key>.'), mode: keyBody.shape.mode.unwrap() })),
  subscriptionRequest: named('SubscriptionRequest', subscriptionBody),
  subscriptionCreated: named(
    'SubscriptionCreated',
    z.strictObject({ id: z.string(), keyId: z.string().describe('Sent as X-Service-Key.'), signingSecret: z.string() }),
  ),
  subscription: named('Subscription', subscriptionState),
  secretRotated: named(
    'SecretRotated',
    z.strictObject({ signingSecret: z.string().describe('The new secret; the old ones sign too until retired.'), activeSecrets: z.number().int() }),
  ),
  secretsRetired: named('SecretsRetired', z.strictObject({ activeSecrets: z.literal(1) })),
  patientRequest: named('PatientRequest', patientBody),
  patient: named('Patient', z.strictObject({ serviceId: z.string(), externalId: z.string().nullable(), name: z.string(), phone: z.string() })),
  appointmentRequest: named('AppointmentRequest', appointmentBody),
  rescheduleRequest: named('RescheduleRequest', rescheduleBody),
  paymentRequest: named('PaymentChangeRequest', paymentChangeBody),
  appointment: named(
    'Appointment',
    z
      .strictObject({ serviceId: z.string(), appointment: appointmentSchema, doctor: doctorSchema, patient: patientSchema, location: locationSchema })
      .describe('The snapshot its events carry.'),
  ),
  documentReleased: named(
    'DocumentReleased',
    z.strictObject({
      serviceId: z.string(),
      externalId: z.string(),
      status: z.enum(DOCUMENT_STATUSES),
      statusReason: z.string().optional(),
      releaseAfter: z.string().optional(),
      sentAt: z.string().optional(),
    }),
  ),
  clockAdvanceRequest: named('ClockAdvanceRequest', clockAdvanceBody),
  clock: named('Clock', z.strictObject({ now: iso, offsetSeconds: z.number().describe('How far the clock is ahead of real time; it only grows.') })),
  deliveries: named(
    'Deliveries',
    z.array(
      z.strictObject({
        subscriptionId: z.string(),
        eventId: z.string(),
        eventType: z.string(),
        attempt: z.number().int(),
        statusCode: z.number().int().nullable(),
        error: z.string().nullable(),
        at: iso,
      }),
    ),
  ),
  messages: named(
    'Messages',
    z.array(
      z.strictObject({
        documentServiceId: z.string(),
        phone: z.string(),
        text: z.string(),
        attachment: z.strictObject({ name: z.string(), mimeType: z.enum(ACCEPTED_MIME_TYPES), size: z.number().int(), sha256: z.string() }),
        at: iso,
      }),
    ),
  ),
  alerts: named(
    'Alerts',
    z.array(
      z.strictObject({
        kind: z.enum(['delivery_given_up', 'subscription_paused']),
        subscriptionId: z.string().nullable(),
        eventId: z.string().nullable(),
        message: z.string(),
        at: iso,
      }),
    ),
  ),
  faultsRequest: named('FaultsRequest', faultsSchema),
  faults: named('Faults', faultsSchema),
};
