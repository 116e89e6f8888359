// The adapter's HTTP API as an OpenAPI description: the webhook receiver, health, readiness, metrics, the
// JWKS, and the admin API under /admin (ADMIN_TOKEN). Request schemas are the ones the routes validate
// with; answer schemas (./admin-schemas.ts) describe what the routes send (test/openapi/openapi.test.ts
// checks real answers).
import { z } from 'zod';
import { auditListParams } from '../audit/admin-router.ts';
import { DEFAULT_LIMIT, listParams, MAX_LIMIT } from '../http/list-query.ts';
import { mappingLookupParams } from '../mappings/admin-router.ts';
import { deadLetterListParams } from '../processor/admin-router.ts';
import { eventSearchParams } from '../processor/events-router.ts';
import { documentListParams } from '../pusher/admin-router.ts';
import { quarantineListParams } from '../receiver/quarantine-admin-router.ts';
import { WEBHOOK_PATH } from '../receiver/router.ts';
import { HEADERS } from '../signature/webhook-signature.ts';
import { adminSchemas as schemas } from './admin-schemas.ts';
import { crosswalkRoutes } from './crosswalk.ts';
import { buildOpenApi, type OpenApiDocument } from '../openapi/build.ts';
import type { ApiDescription, ParameterDescription } from '../openapi/describe.ts';
import { optionalBody, reply, routesOf, tagsOf } from '../openapi/route.ts';
import { OPENAPI_PATH } from '../openapi/router.ts';

const text = (description: string): ParameterDescription => ({ schema: z.string(), description });
const OPEN = { auth: false } as const;
const ADMIN = {
  auth: true,
  errors: {
    401: 'unauthorized: no token, or one that matches no credential (recorded in the audit trail as a failed sign-in).',
    429: 'too_many_attempts: repeated failed sign-ins from this address; wait for `Retry-After` seconds.',
  },
} as const;
/** A route that needs the operator role (it changes state, or shows a stored body). */
const OPERATOR = { 403: 'forbidden: the credential is a viewer; this needs an operator. Recorded in the audit trail as denied.' };
const badParameter = { 400: 'invalid_request: a bad or unknown parameter (named in `field`).' };

/** A list's query: the shared parameters (src/http/list-query.ts) and its own, described. */
function listQuery(own: Record<string, z.ZodType>, texts: Record<string, string>): Record<string, ParameterDescription> {
  const shared: Record<string, string> = {
    limit: `Rows per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`,
    cursor: "The previous page's nextCursor.",
    type: 'Only this type.',
    since: 'Only rows from this ISO 8601 time on (a date, or a date-time with a zone).',
    until: 'Only rows before this ISO 8601 time; later than since.',
  };
  const all: Record<string, z.ZodType> = { ...listParams, ...own };
  return Object.fromEntries(Object.entries(all).map(([name, schema]) => [name, { schema, description: texts[name] ?? shared[name]! }]));
}

const signatureHeaders: Record<string, ParameterDescription> = {
  [HEADERS.key]: { ...text('The key identifier of the signing secrets (SERVICE_KEY_ID).'), required: true },
  [HEADERS.timestamp]: { ...text('Unix seconds when the attempt left; within WEBHOOK_TOLERANCE_SECONDS of now, both directions.'), required: true },
  [HEADERS.signature]: {
    ...text('`v1=<hex HMAC-SHA256(secret, timestamp + "." + raw body bytes)>`, one per active secret, space-separated; one must match.'),
    required: true,
  },
  [HEADERS.eventId]: text("The eventId, used as it is (the body is not parsed on the request path); without it, the body's."),
  [HEADERS.eventType]: text("The event type; without it, the body's."),
  [HEADERS.attempt]: text('1 for the first delivery attempt.'),
};

const receiverRoutes = routesOf({ tag: 'receiver', ...OPEN }, (route) => [
  route(`post ${WEBHOOK_PATH}`, 'receiveWebhook', 'Receive a signed webhook from the service', {
    description:
      'Checks the HMAC over the raw bytes, stores the event durably in the inbox and answers 200 once it is on disk (a repeat of an eventId answers 200 with duplicate: true). The body is not parsed here: the processor parses it later with this schema and dead-letters what fails it. A correctly signed body over WEBHOOK_MAX_BODY_BYTES is kept in the quarantine instead (up to WEBHOOK_QUARANTINE_BYTES in all) and answered 202, until an operator applies or dismisses it.',
    headers: signatureHeaders,
    body: schemas.webhookEvent,
    responses: {
      200: reply('Stored (or already stored).', schemas.webhookAck),
      202: reply('Over WEBHOOK_MAX_BODY_BYTES and correctly signed: kept in the quarantine (or kept already).', schemas.webhookQuarantined),
    },
    errors: {
      401: 'invalid_signature: a header is missing, the key or timestamp is wrong, or no signature matches (one answer for all); over the limit, nothing is kept, and the body is not read when a header fails.',
      413: 'payload_too_large: larger than WEBHOOK_MAX_BODY_BYTES and not kept: the quarantine is full (or off), or the body is larger than 16 MiB.',
      503: 'The store cannot take the write now (disk full, read-only, locked); the service retries.',
    },
  }),
]);

const operationRoutes = routesOf({ tag: 'operations', ...OPEN }, (route) => [
  route('get /healthz', 'health', 'Liveness: 200 while the process runs', { responses: { 200: reply('Running.', schemas.health) } }),
  route('get /readyz', 'readiness', 'Readiness: the store takes writes and the workers run', {
    responses: { 200: reply('Ready.', schemas.readiness), 503: reply('Not ready; `checks` says which.', schemas.readiness) },
  }),
  route('get /metrics', 'metrics', 'Prometheus metrics (on the admin listener when ADMIN_PORT is set)', {
    responses: { 200: { description: 'The Prometheus text exposition format.', contentType: 'text/plain', body: { type: 'string' } } },
  }),
  route(`get ${OPENAPI_PATH}`, 'openApi', 'This document (on the admin listener when ADMIN_PORT is set)', {
    responses: { 200: reply('The OpenAPI 3.1 document of this API.', { type: 'object' }) },
  }),
  route('get /.well-known/jwks.json', 'jwks', "The adapter's public key, for an EMR that registers it by a JWKS URL (FHIR_AUTH=smart only)", {
    responses: {
      200: reply('A JSON Web Key Set with the one public key the adapter signs its SMART assertions with.', {
        type: 'object',
        properties: { keys: { type: 'array', items: { type: 'object', required: ['kty', 'kid'] } } },
        required: ['keys'],
      }),
    },
  }),
]);

const statusRoutes = routesOf({ tag: 'admin', ...ADMIN }, (route) => [
  route(
    'get /admin/status',
    'getStatus',
    'Each dependency (database, EMR, service): whether it works now, why not, since when; the events waiting for a mapping',
    {
      responses: { 200: reply('The dependencies.', schemas.status) },
    },
  ),
]);

const downtimeRoutes = routesOf({ tag: 'admin', ...ADMIN }, (route) => [
  route('get /admin/emr/downtime', 'getEmrDowntime', "The EMR's planned downtime: the one in force, EMR_DOWNTIME's windows and the next to start", {
    responses: { 200: reply('The planned downtime.', schemas.emrDowntime) },
  }),
  route('post /admin/emr/downtime', 'startEmrDowntime', 'Start a planned EMR downtime now, until a time, with a reason', {
    description:
      'No EMR work is done until then (events and documents wait, spending no attempt; no readiness ping, capability check or document scan), and no incident is raised; the receiver keeps taking webhooks. Replaces a downtime set before; an EMR_DOWNTIME window in force carries on to its own end. Kept in the database: every replica honours it (within seconds) and a restart keeps it. Audited as emr_downtime.start (the time, never the reason).',
    body: schemas.startEmrDowntimeRequest,
    responses: { 200: reply('In force.', schemas.emrDowntimeStarted) },
    errors: { ...OPERATOR, 400: 'invalid_request: until is not a date-time with a zone, not later than now, or more than 31 days away; or no reason.' },
  }),
  route('delete /admin/emr/downtime', 'endEmrDowntime', 'End the planned EMR downtime in force now (the EMR is back early)', {
    description:
      "Ends the operator's downtime and the EMR_DOWNTIME window in force, if any (later windows still count). The work resumes once the EMR answers a ping. Audited as emr_downtime.end.",
    responses: { 200: reply('Ended, or none was in force.', schemas.emrDowntimeEnded) },
    errors: OPERATOR,
  }),
]);

const deadLetterRoutes = routesOf({ tag: 'dead letters', ...ADMIN }, (route) => [
  route('get /admin/dead-letters', 'listDeadLetters', 'Dead letters (events, then refused mappings), a page at a time', {
    query: listQuery(deadLetterListParams, {
      type: 'Only events of this type (mappings are not events: none is listed).',
      state: 'dead (the default) or dismissed.',
    }),
    responses: { 200: reply('A page.', schemas.deadLetterPage) },
    errors: badParameter,
  }),
  route('post /admin/dead-letters/replay', 'replayAllDeadLetters', 'Replay every dead letter, or every one of an event type', {
    body: optionalBody(schemas.replayAllRequest),
    responses: { 200: reply('How many were put back.', schemas.replayAllResult) },
    errors: { 400: 'invalid_request', ...OPERATOR },
  }),
  route(
    'post /admin/dead-letters/mappings/{entityType}/{serviceId}/replay',
    'replayDeadMapping',
    'Replay a refused mapping: posted to the service again, with fresh attempts',
    {
      responses: { 200: reply('Queued again.', schemas.mappingReplayed) },
      errors: {
        ...OPERATOR,
        404: 'not_found: no such mapping.',
        409: 'not_dead_letter: the mapping is not a dead letter (or was dismissed).',
      },
    },
  ),
  route(
    'post /admin/dead-letters/mappings/{entityType}/{serviceId}/dismiss',
    'dismissDeadMapping',
    'Dismiss a refused mapping, with a reason (kept, never sent)',
    {
      body: schemas.dismissRequest,
      responses: { 200: reply('Dismissed.', schemas.mappingDismissed) },
      errors: {
        ...OPERATOR,
        400: 'invalid_request',
        404: 'not_found: no such mapping.',
        409: 'not_dead_letter: the mapping is not a dead letter, or already dismissed.',
      },
    },
  ),
  route('post /admin/dead-letters/{eventId}/replay', 'replayDeadLetter', "Replay a dead letter: back in its entity's order with fresh attempts", {
    responses: { 200: reply('Queued again.', schemas.replayed) },
    errors: { ...OPERATOR, 404: 'not_found: no such event.', 409: 'not_dead_letter: the event is not a dead letter (or was dismissed).' },
  }),
  route('post /admin/dead-letters/{eventId}/dismiss', 'dismissDeadLetter', 'Dismiss a dead letter, with a reason (kept for good, never replayed)', {
    body: schemas.dismissRequest,
    responses: { 200: reply('Dismissed.', schemas.eventDismissed) },
    errors: {
      ...OPERATOR,
      400: 'invalid_request',
      404: 'not_found: no such event.',
      409: 'not_dead_letter: the event is not a dead letter, or already dismissed.',
    },
  }),
  route('get /admin/events/{eventId}', 'getEvent', "Any stored event's processing state, its state history and the EMR records it wrote", {
    description: 'Identifiers, states, reasons and times; never the body (the console reveals a body to an operator, and records it).',
    responses: { 200: reply('The event.', schemas.eventDetail) },
    errors: { 404: 'not_found: no such event.' },
  }),
]);

const quarantineRoutes = routesOf({ tag: 'quarantine', ...ADMIN }, (route) => [
  route('get /admin/quarantine', 'listQuarantine', 'Signed webhooks over WEBHOOK_MAX_BODY_BYTES kept in the quarantine, a page at a time, with its room', {
    description: 'Identifiers, sizes, states and times; never a body.',
    query: listQuery(quarantineListParams, {
      type: 'Only events of this type.',
      state: 'quarantined (the default: waiting for an operator), applied or dismissed.',
      since: 'Only events received from this ISO 8601 time on.',
      until: 'Only events received before this ISO 8601 time; later than since.',
    }),
    responses: { 200: reply('A page.', schemas.quarantinePage) },
    errors: badParameter,
  }),
  route('post /admin/quarantine/{eventId}/apply', 'applyQuarantined', 'Apply a quarantined webhook: into the inbox as if received now, processed once', {
    description:
      'Only when its size is at most WEBHOOK_MAX_BODY_BYTES now (raise it and restart the adapter first). Once: the body moves to the inbox and is dropped here; the row stays, applied.',
    responses: { 200: reply('In the inbox (inbox: duplicate when the inbox held its eventId already).', schemas.quarantineApplied) },
    errors: {
      ...OPERATOR,
      404: 'not_found: no such quarantined event.',
      409: 'not_quarantined: applied or dismissed already.',
      422: 'limit_too_low: its body is larger than WEBHOOK_MAX_BODY_BYTES; the message says the size to raise it to.',
    },
  }),
  route('post /admin/quarantine/{eventId}/dismiss', 'dismissQuarantined', 'Dismiss a quarantined webhook, with a reason (its body dropped, never applied)', {
    body: schemas.dismissRequest,
    responses: { 200: reply('Dismissed.', schemas.quarantineDismissed) },
    errors: {
      ...OPERATOR,
      400: 'invalid_request',
      404: 'not_found: no such quarantined event.',
      409: 'not_quarantined: applied or dismissed already.',
    },
  }),
]);

const eventRoutes = routesOf({ tag: 'events', ...ADMIN }, (route) => [
  route('get /admin/events', 'searchEvents', 'Events, newest first, a page at a time: by eventId, type, the entity serviceId, state and received time', {
    query: {
      eventId: { schema: eventSearchParams.eventId, description: 'Only this event.' },
      eventType: { schema: eventSearchParams.eventType, description: 'Only events of this type.' },
      serviceId: {
        schema: eventSearchParams.serviceId,
        description: 'Only events about the entity with this serviceId (appointment, patient, or document externalId).',
      },
      state: { schema: eventSearchParams.state, description: 'Only events in this state (received: not taken in yet).' },
      since: { schema: eventSearchParams.since, description: 'Only events received from this ISO 8601 time on.' },
      until: { schema: eventSearchParams.until, description: 'Only events received before this ISO 8601 time; later than since.' },
      after: { schema: eventSearchParams.after, description: "The previous page's `next`." },
      limit: { schema: eventSearchParams.limit, description: `Events per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).` },
    },
    responses: { 200: reply('A page.', schemas.eventPage) },
    errors: badParameter,
  }),
  route('get /admin/stats/minutes', 'eventMinutes', 'Events received and applied per minute over the last 24 hours', {
    responses: { 200: reply('One entry per minute.', schemas.minutes) },
  }),
  route('get /admin/mappings', 'findMappings', "A mapping by the service's id or by the EMR's: the other side, and whether the service has it", {
    query: {
      serviceId: { schema: mappingLookupParams.serviceId, description: "The service's id: its mapping of each entity type." },
      emrId: {
        schema: mappingLookupParams.emrId,
        description: 'The EMR id: a reference as the EMR module names its records (FHIR: `Patient/12`, that type only) or a bare id (any type).',
      },
    },
    responses: { 200: reply('The mappings found (none: an empty list).', schemas.mappings) },
    errors: { 400: 'invalid_request: neither or both of serviceId and emrId, or an unknown parameter.' },
  }),
]);

const documentRoutes = routesOf({ tag: 'documents', ...ADMIN }, (route) => [
  route('post /admin/documents', 'pushDocument', 'Hand a document to the outbox, which checks it, sends it once and follows it', {
    headers: { 'x-emr-bridge-source': text('`cli` marks a document pushed by `emr-bridge push`; anything else is `api`.') },
    body: schemas.pushRequest,
    responses: {
      202: reply('Queued.', schemas.documentAccepted),
      200: reply('The externalId is known: the document as it is.', schemas.documentAccepted),
    },
    errors: {
      ...OPERATOR,
      400: 'invalid_request: not a request of that documentType (the field is named).',
      413: 'file_too_large (the file), or payload_too_large (the body is larger than the admin API reads).',
      415: 'unsupported_file_type: only PDF, JPEG and PNG, judged by their bytes.',
      422: 'Refused by the local checks (the code says which).',
    },
  }),
  route('get /admin/documents', 'listDocuments', 'Documents, newest first, a page at a time (by status, type and creation time)', {
    query: listQuery(documentListParams, { type: 'Only this document type.', status: 'Only this status.' }),
    responses: { 200: reply('A page.', schemas.documentPage) },
    errors: badParameter,
  }),
  route('post /admin/documents/{externalId}/retry', 'retryDocument', 'Send again a document that failed here before the service took it', {
    responses: { 200: reply('Queued again.', schemas.document) },
    errors: {
      ...OPERATOR,
      404: 'not_found: no such document.',
      409: 'not_retryable: it did not fail here (SENT, SUPPRESSED, FAILED by the service are final).',
    },
  }),
  route(
    'get /admin/documents/{externalId}',
    'getDocument',
    'One document and its history: identifiers, status, reasons and times (never its label, patient or bytes)',
    {
      responses: { 200: reply('The document, and every status it went through.', schemas.documentWithHistory) },
      errors: { 404: 'not_found: no such document.' },
    },
  ),
]);

const auditRoutes = routesOf({ tag: 'audit', ...ADMIN }, (route) => [
  route('get /admin/audit', 'listAudit', 'The audit trail: every admin action (API, CLI, console) and failed sign-in, newest first', {
    description:
      'Reads (viewer and up) are not recorded, except a stored body shown. Entries hold identifiers only: never a name, phone, label, body or reason text. Kept RETENTION_AUDIT_DAYS (six years by default).',
    query: {
      actor: { schema: auditListParams.actor, description: "Only this credential's entries (`-`: failed sign-ins)." },
      action: { schema: auditListParams.action, description: 'Only this action (dead_letter.replay, document.retry, sign_in, …).' },
      target: { schema: auditListParams.target, description: 'Only entries naming this id (an eventId, an externalId, `entityType:serviceId`).' },
      since: { schema: auditListParams.since, description: 'Only entries from this ISO 8601 time on.' },
      until: { schema: auditListParams.until, description: 'Only entries before this ISO 8601 time; later than since.' },
      before: { schema: auditListParams.before, description: "Only entries older than this id: the previous page's nextBefore." },
      limit: { schema: auditListParams.limit, description: `Entries per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).` },
    },
    responses: { 200: reply('A page.', schemas.auditPage) },
    errors: badParameter,
  }),
]);

export const adminApi: ApiDescription = {
  title: 'emr-bridge adapter',
  description:
    'The adapter\'s HTTP API: the signed webhook receiver, health, readiness and metrics, and the admin API under /admin (Authorization: Bearer ADMIN_TOKEN). Every error answers {"error": {"code", "message", "field"?}}.',
  bearer: {
    name: 'adminToken',
    description:
      'ADMIN_TOKEN (16+ characters, the operator `admin`; generated in zero-configuration mode), or a named credential of ADMIN_CREDENTIALS_FILE: a viewer reads, an operator also changes state and shows bodies.',
  },
  tags: tagsOf({
    receiver: 'What the service calls.',
    operations: 'Health, readiness, metrics and keys: no token.',
    admin: 'The adapter itself.',
    'dead letters': 'Events and mappings parked for a person.',
    quarantine: 'Signed webhooks over WEBHOOK_MAX_BODY_BYTES, kept for a person to apply or dismiss.',
    events: 'Events searched, counted per minute, and the mappings they made (what the console shows).',
    documents: 'The document outbox (EMR → service).',
    crosswalk: 'Service records and the EMR records they stand for, where the EMR owns its records; the events waiting for a person to map one.',
    audit: 'Who did what on the admin surface.',
  }),
  routes: [
    ...receiverRoutes,
    ...operationRoutes,
    ...statusRoutes,
    ...downtimeRoutes,
    ...deadLetterRoutes,
    ...quarantineRoutes,
    ...eventRoutes,
    ...documentRoutes,
    ...crosswalkRoutes(ADMIN, OPERATOR),
    ...auditRoutes,
  ],
};

/** What the adapter serves at /openapi.json. */
export const adminOpenApi = (): OpenApiDocument => buildOpenApi(adminApi);
