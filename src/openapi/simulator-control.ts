// The simulator's control API (/_sim/, what tests, QA and the demo use) as an OpenAPI description, from
// the schemas src/simulator/control-api.ts validates with. It takes no key: the simulator is a test tool.
import { z } from 'zod';
import { ACCEPTED_MIME_TYPES } from '../contract/documents.ts';
import { appointmentSchema, DOCUMENT_STATUSES, doctorSchema, EVENT_TYPES, locationSchema, patientSchema } from '../contract/events.ts';
import { noFields } from '../simulator/control-body.ts';
import {
  appointmentBody,
  clinicSchema,
  clockAdvanceBody,
  keyBody,
  patientBody,
  paymentChangeBody,
  rescheduleBody,
  subscriptionBody,
} from '../simulator/control-api.ts';
import { faultsSchema } from '../simulator/faults.ts';
import { named, type ApiDescription, type RouteDescription } from './describe.ts';
import { OPENAPI_PATH } from './router.ts';

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

const schemas = {
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

const invalid = { 400: 'invalid_request: a bad or unknown field (named in `field`, as a dotted path).' };
const noSubscription = { 404: 'not_found: no such subscription.' };
const noAppointment = { 404: 'not_found: no such appointment.' };

const action = (
  path: string,
  operationId: string,
  summary: string,
  response: RouteDescription['responses'],
  errors: Record<number, string>,
): RouteDescription => ({
  method: 'post',
  path,
  operationId,
  summary,
  tag: path.split('/')[2]!,
  auth: false,
  body: { schema: schemas.noFields, required: false },
  responses: response,
  errors: { ...invalid, ...errors },
});

const appointmentChange = (verb: string, operationId: string, status: string, event: string) =>
  action(
    `/_sim/appointments/{id}/${verb}`,
    operationId,
    `Set the appointment's status to ${status} (sends ${event})`,
    { 200: { description: 'The appointment now.', body: schemas.appointment } },
    noAppointment,
  );

const routes: RouteDescription[] = [
  {
    method: 'post',
    path: '/_sim/clinics',
    operationId: 'createClinic',
    summary: 'Create a clinic (time zone, quiet hours, auto-send per document type)',
    tag: 'clinics',
    auth: false,
    body: { schema: schemas.clinicRequest, required: false },
    responses: { 201: { description: 'Created.', body: schemas.clinic } },
    errors: invalid,
  },
  {
    method: 'post',
    path: '/_sim/keys',
    operationId: 'createKey',
    summary: 'Issue an API key of a clinic for the integration API',
    tag: 'keys',
    auth: false,
    body: { schema: schemas.keyRequest },
    responses: { 201: { description: 'Issued.', body: schemas.key } },
    errors: invalid,
  },
  {
    method: 'post',
    path: '/_sim/subscriptions',
    operationId: 'createSubscription',
    summary: "Subscribe a URL to a clinic's webhooks",
    tag: 'subscriptions',
    auth: false,
    body: { schema: schemas.subscriptionRequest },
    responses: { 201: { description: 'Subscribed: the key id and signing secret the receiver checks.', body: schemas.subscriptionCreated } },
    errors: invalid,
  },
  {
    method: 'get',
    path: '/_sim/subscriptions/{id}',
    operationId: 'getSubscription',
    summary: 'A subscription: paused or not, failures in a row, deliveries queued',
    tag: 'subscriptions',
    auth: false,
    responses: { 200: { description: 'The subscription.', body: schemas.subscription } },
    errors: noSubscription,
  },
  action(
    '/_sim/subscriptions/{id}/resume',
    'resumeSubscription',
    'Resume a paused subscription (its queue goes out)',
    { 200: { description: 'The subscription.', body: schemas.subscription } },
    noSubscription,
  ),
  action(
    '/_sim/subscriptions/{id}/rotate-secret',
    'rotateSecret',
    'Add a new signing secret (every active one signs)',
    { 200: { description: 'The new secret.', body: schemas.secretRotated } },
    noSubscription,
  ),
  action(
    '/_sim/subscriptions/{id}/retire-secrets',
    'retireSecrets',
    'Keep only the newest signing secret',
    { 200: { description: 'Retired.', body: schemas.secretsRetired } },
    noSubscription,
  ),
  {
    method: 'post',
    path: '/_sim/patients',
    operationId: 'createPatient',
    summary: 'A patient registers "from any channel" (sends patient.created)',
    tag: 'patients',
    auth: false,
    body: { schema: schemas.patientRequest },
    responses: { 201: { description: 'Created.', body: schemas.patient } },
    errors: invalid,
  },
  {
    method: 'post',
    path: '/_sim/appointments',
    operationId: 'createAppointment',
    summary: 'Book an appointment (sends appointment.created); doctor, patient and location are made unless named',
    tag: 'appointments',
    auth: false,
    body: { schema: schemas.appointmentRequest },
    responses: { 201: { description: 'Booked.', body: schemas.appointment } },
    errors: invalid,
  },
  {
    method: 'post',
    path: '/_sim/appointments/{id}/reschedule',
    operationId: 'rescheduleAppointment',
    summary: 'Move an appointment (sends appointment.rescheduled)',
    tag: 'appointments',
    auth: false,
    body: { schema: schemas.rescheduleRequest, required: false },
    responses: { 200: { description: 'The appointment now.', body: schemas.appointment } },
    errors: { ...invalid, ...noAppointment },
  },
  appointmentChange('cancel', 'cancelAppointment', 'Cancelled', 'appointment.cancelled'),
  appointmentChange('complete', 'completeAppointment', 'Completed', 'appointment.completed'),
  appointmentChange('no-show', 'noShowAppointment', 'NoShow', 'appointment.no_show'),
  {
    method: 'post',
    path: '/_sim/appointments/{id}/payment',
    operationId: 'updatePayment',
    summary: "Change an appointment's payment (sends appointment.payment_updated)",
    tag: 'appointments',
    auth: false,
    body: { schema: schemas.paymentRequest, required: false },
    responses: { 200: { description: 'The appointment now.', body: schemas.appointment } },
    errors: { ...invalid, ...noAppointment },
  },
  {
    method: 'get',
    path: '/_sim/appointments/{id}',
    operationId: 'getAppointment',
    summary: 'An appointment as its events carry it',
    tag: 'appointments',
    auth: false,
    responses: { 200: { description: 'The appointment.', body: schemas.appointment } },
    errors: noAppointment,
  },
  action(
    '/_sim/documents/{serviceId}/release',
    'releaseDocument',
    'A clinic person releases a HELD document (quiet hours still apply)',
    { 200: { description: 'The document now.', body: schemas.documentReleased } },
    { 404: 'not_found: no such document.', 400: 'not_held: the document is not HELD.' },
  ),
  {
    method: 'get',
    path: '/_sim/clock',
    operationId: 'getClock',
    summary: "The simulator's clock",
    tag: 'clock',
    auth: false,
    responses: { 200: { description: 'Now.', body: schemas.clock } },
  },
  {
    method: 'post',
    path: '/_sim/clock/advance',
    operationId: 'advanceClock',
    summary: 'Move the clock forward; what falls due on the way fires, each at its own time',
    tag: 'clock',
    auth: false,
    body: { schema: schemas.clockAdvanceRequest },
    responses: { 200: { description: 'Now.', body: schemas.clock } },
    errors: invalid,
  },
  {
    method: 'get',
    path: '/_sim/deliveries',
    operationId: 'listDeliveries',
    summary: 'Every webhook delivery attempt, oldest first',
    tag: 'observations',
    auth: false,
    query: { subscriptionId: { schema: z.string(), description: "Only this subscription's." } },
    responses: { 200: { description: 'The attempts.', body: schemas.deliveries } },
  },
  {
    method: 'get',
    path: '/_sim/messages',
    operationId: 'listMessages',
    summary: "What reached patients' messaging accounts, oldest first",
    tag: 'observations',
    auth: false,
    query: { phone: { schema: z.string(), description: 'Only messages to this phone.' } },
    responses: { 200: { description: 'The messages.', body: schemas.messages } },
  },
  {
    method: 'get',
    path: '/_sim/alerts',
    operationId: 'listAlerts',
    summary: "The service's alerts to the clinic (deliveries given up, subscriptions paused)",
    tag: 'observations',
    auth: false,
    responses: { 200: { description: 'The alerts.', body: schemas.alerts } },
  },
  {
    method: 'get',
    path: '/_sim/faults',
    operationId: 'getFaults',
    summary: 'The faults switched on',
    tag: 'faults',
    auth: false,
    responses: { 200: { description: 'The faults.', body: schemas.faults } },
  },
  {
    method: 'post',
    path: '/_sim/faults',
    operationId: 'setFaults',
    summary: 'Switch faults on (replacing those on): duplicates, disorder, failing messaging, integration API errors, a rate limit',
    tag: 'faults',
    auth: false,
    body: { schema: schemas.faultsRequest },
    responses: { 200: { description: 'The faults now.', body: schemas.faults } },
    errors: invalid,
  },
  {
    method: 'delete',
    path: '/_sim/faults',
    operationId: 'clearFaults',
    summary: 'Switch every fault off',
    tag: 'faults',
    auth: false,
    responses: { 200: { description: 'None.', body: schemas.faults } },
  },
  {
    method: 'get',
    path: OPENAPI_PATH,
    operationId: 'openApi',
    summary: 'The OpenAPI 3.1 document of the simulator (integration and control APIs)',
    tag: 'documentation',
    auth: false,
    responses: { 200: { description: 'This document.', body: { type: 'object' } } },
  },
];

export const simulatorControlApi: ApiDescription = {
  title: 'emr-bridge simulator: control API',
  description:
    'What tests, QA and the demo use to play the service\'s other side (/_sim/): clinics, keys, subscriptions, patients and appointments "from any channel", a clinic person\'s release, the clock, faults, and what happened. No key. Every body is strict: an unknown field, at any depth, answers 400 naming it. Every error answers {"error": {"code", "message", "field"?}}.',
  tags: [
    { name: 'clinics', description: 'Clinics and their settings.' },
    { name: 'keys', description: 'API keys for the integration API.' },
    { name: 'subscriptions', description: 'Webhook subscriptions and their signing secrets.' },
    { name: 'patients', description: 'Patients registering.' },
    { name: 'appointments', description: 'Appointments and their changes (each sends its event).' },
    { name: 'documents', description: 'A clinic person acting on documents.' },
    { name: 'clock', description: 'The simulated clock.' },
    { name: 'observations', description: 'What happened: deliveries, messages, alerts.' },
    { name: 'faults', description: 'Faults QA switches on.' },
    { name: 'documentation', description: 'This document.' },
  ],
  routes,
};
