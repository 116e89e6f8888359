// The simulator's control API (/_sim/, what tests, QA and the demo use) as an OpenAPI description; its
// requests and answers are in ./control-schemas.ts. It takes no key: the simulator is a test tool.
import { z } from 'zod';
import type { ApiDescription, ResponseDescription, RouteDescription } from '../../openapi/describe.ts';
import { optionalBody, reply, routeGroup, tagsOf, type DescribeRoute } from '../../openapi/route.ts';
import { OPENAPI_PATH } from '../../openapi/router.ts';
import { simulatorControlSchemas as schemas } from './control-schemas.ts';

const invalid = { 400: 'invalid_request: a bad or unknown field (named in `field`, as a dotted path).' };
const noSubscription = { 404: 'not_found: no such subscription.' };
const noAppointment = { 404: 'not_found: no such appointment.' };
/** The body of an action that takes none. */
const noBody = optionalBody(schemas.noFields);

/** The routes of one tag: no key; a route that reads a body may answer 400 for it (every body is strict). */
function control(tag: string, describe: (route: DescribeRoute) => RouteDescription[]): RouteDescription[] {
  const route = routeGroup({ tag, auth: false });
  return describe((endpoint, operationId, summary, fields) =>
    route(endpoint, operationId, summary, fields.body ? { ...fields, errors: { ...invalid, ...fields.errors } } : fields),
  );
}

const clinicRoutes = control('clinics', (clinic) => [
  clinic(
    'post /_sim/clinics',
    'createClinic',
    'Create a clinic (time zone, quiet hours, auto-send per document type; a roster of doctors and locations, appointment hours)',
    {
      body: optionalBody(schemas.clinicRequest),
      responses: { 201: reply('Created.', schemas.clinic) },
    },
  ),
]);

const keyRoutes = control('keys', (key) => [
  key('post /_sim/keys', 'createKey', 'Issue an API key of a clinic for the integration API', {
    body: schemas.keyRequest,
    responses: { 201: reply('Issued.', schemas.key) },
  }),
]);

const subscriptionRoutes = control('subscriptions', (subscription) => {
  const action = (verb: string, operationId: string, summary: string, answer: ResponseDescription) =>
    subscription(`post /_sim/subscriptions/{id}/${verb}`, operationId, summary, { body: noBody, responses: { 200: answer }, errors: noSubscription });
  return [
    subscription('post /_sim/subscriptions', 'createSubscription', "Subscribe a URL to a clinic's webhooks", {
      body: schemas.subscriptionRequest,
      responses: { 201: reply('Subscribed: the key id and signing secret the receiver checks.', schemas.subscriptionCreated) },
    }),
    subscription('get /_sim/subscriptions/{id}', 'getSubscription', 'A subscription: paused or not, failures in a row, deliveries queued', {
      responses: { 200: reply('The subscription.', schemas.subscription) },
      errors: noSubscription,
    }),
    action('resume', 'resumeSubscription', 'Resume a paused subscription (its queue goes out)', reply('The subscription.', schemas.subscription)),
    action('rotate-secret', 'rotateSecret', 'Add a new signing secret (every active one signs)', reply('The new secret.', schemas.secretRotated)),
    action('retire-secrets', 'retireSecrets', 'Keep only the newest signing secret', reply('Retired.', schemas.secretsRetired)),
  ];
});

const patientRoutes = control('patients', (patient) => [
  patient('post /_sim/patients', 'createPatient', 'A patient registers "from any channel" (sends patient.created)', {
    body: schemas.patientRequest,
    responses: { 201: reply('Created.', schemas.patient) },
  }),
]);

const appointmentNow = { 200: reply('The appointment now.', schemas.appointment) };
const appointmentRoutes = control('appointments', (appointment) => {
  const statusChange = (verb: string, operationId: string, status: string, event: string) =>
    appointment(`post /_sim/appointments/{id}/${verb}`, operationId, `Set the appointment's status to ${status} (sends ${event})`, {
      body: noBody,
      responses: appointmentNow,
      errors: noAppointment,
    });
  return [
    appointment(
      'post /_sim/appointments',
      'createAppointment',
      'Book an appointment (sends appointment.created); doctor, patient and location are made unless named',
      { body: schemas.appointmentRequest, responses: { 201: reply('Booked.', schemas.appointment) } },
    ),
    appointment('post /_sim/appointments/{id}/reschedule', 'rescheduleAppointment', 'Move an appointment (sends appointment.rescheduled)', {
      body: optionalBody(schemas.rescheduleRequest),
      responses: appointmentNow,
      errors: noAppointment,
    }),
    statusChange('cancel', 'cancelAppointment', 'Cancelled', 'appointment.cancelled'),
    statusChange('complete', 'completeAppointment', 'Completed', 'appointment.completed'),
    statusChange('no-show', 'noShowAppointment', 'NoShow', 'appointment.no_show'),
    appointment('post /_sim/appointments/{id}/payment', 'updatePayment', "Change an appointment's payment (sends appointment.payment_updated)", {
      body: optionalBody(schemas.paymentRequest),
      responses: appointmentNow,
      errors: noAppointment,
    }),
    appointment('get /_sim/appointments/{id}', 'getAppointment', 'An appointment as its events carry it', {
      responses: { 200: reply('The appointment.', schemas.appointment) },
      errors: noAppointment,
    }),
  ];
});

const documentRoutes = control('documents', (document) => [
  document('post /_sim/documents/{serviceId}/release', 'releaseDocument', 'A clinic person releases a HELD document (quiet hours still apply)', {
    body: noBody,
    responses: { 200: reply('The document now.', schemas.documentReleased) },
    errors: { 404: 'not_found: no such document.', 400: 'not_held: the document is not HELD.' },
  }),
]);

const clockRoutes = control('clock', (clock) => [
  clock('get /_sim/clock', 'getClock', "The simulator's clock", { responses: { 200: reply('Now.', schemas.clock) } }),
  clock('post /_sim/clock/advance', 'advanceClock', 'Move the clock forward; what falls due on the way fires, each at its own time', {
    body: schemas.clockAdvanceRequest,
    responses: { 200: reply('Now.', schemas.clock) },
  }),
]);

const observationRoutes = control('observations', (observation) => [
  observation('get /_sim/deliveries', 'listDeliveries', 'Every webhook delivery attempt, oldest first', {
    query: { subscriptionId: { schema: z.string(), description: "Only this subscription's." } },
    responses: { 200: reply('The attempts.', schemas.deliveries) },
  }),
  observation('get /_sim/messages', 'listMessages', "What reached patients' messaging accounts, oldest first", {
    query: { phone: { schema: z.string(), description: 'Only messages to this phone.' } },
    responses: { 200: reply('The messages.', schemas.messages) },
  }),
  observation('get /_sim/alerts', 'listAlerts', "The service's alerts to the clinic (deliveries given up, subscriptions paused)", {
    responses: { 200: reply('The alerts.', schemas.alerts) },
  }),
]);

const faultRoutes = control('faults', (fault) => [
  fault('get /_sim/faults', 'getFaults', 'The faults switched on', { responses: { 200: reply('The faults.', schemas.faults) } }),
  fault(
    'post /_sim/faults',
    'setFaults',
    'Switch faults on (replacing those on): duplicates, disorder, failing messaging, integration API errors, a rate limit',
    { body: schemas.faultsRequest, responses: { 200: reply('The faults now.', schemas.faults) } },
  ),
  fault('delete /_sim/faults', 'clearFaults', 'Switch every fault off', { responses: { 200: reply('None.', schemas.faults) } }),
]);

const documentationRoutes = control('documentation', (documentation) => [
  documentation(`get ${OPENAPI_PATH}`, 'openApi', 'The OpenAPI 3.1 document of the simulator (integration and control APIs)', {
    responses: { 200: reply('This document.', { type: 'object' }) },
  }),
]);

export const simulatorControlApi: ApiDescription = {
  title: 'emr-bridge simulator: control API',
  description:
    'What tests, QA and the demo use to play the service\'s other side (/_sim/): clinics, keys, subscriptions, patients and appointments "from any channel", a clinic person\'s release, the clock, faults, and what happened. No key. Every body is strict: an unknown field, at any depth, answers 400 naming it. Every error answers {"error": {"code", "message", "field"?}}.',
  tags: tagsOf({
    clinics: 'Clinics and their settings.',
    keys: 'API keys for the integration API.',
    subscriptions: 'Webhook subscriptions and their signing secrets.',
    patients: 'Patients registering.',
    appointments: 'Appointments and their changes (each sends its event).',
    documents: 'A clinic person acting on documents.',
    clock: 'The simulated clock.',
    observations: 'What happened: deliveries, messages, alerts.',
    faults: 'Faults QA switches on.',
    documentation: 'This document.',
  }),
  routes: [
    ...clinicRoutes,
    ...keyRoutes,
    ...subscriptionRoutes,
    ...patientRoutes,
    ...appointmentRoutes,
    ...documentRoutes,
    ...clockRoutes,
    ...observationRoutes,
    ...faultRoutes,
    ...documentationRoutes,
  ],
};
