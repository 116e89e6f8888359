// The adapter's HTTP API as an OpenAPI description: the webhook receiver, health, readiness, metrics, the
// JWKS, and the admin API under /admin (ADMIN_TOKEN). Request schemas are the ones the routes validate
// with; answer schemas describe what the routes send (test/openapi/openapi.test.ts checks real answers).
import { z } from 'zod';
import { fileSchema, labReportRequestSchema, prescriptionRequestSchema } from '../contract/documents.ts';
import { DOCUMENT_TYPES, webhookEventSchema } from '../contract/events.ts';
import { DEFAULT_LIMIT, listParams, MAX_LIMIT } from '../http/list-query.ts';
import { deadLetterListParams, dismissBody, replayAllBody } from '../processor/admin-router.ts';
import type { EventStatus } from '../processor/index.ts';
import { documentListParams } from '../pusher/admin-router.ts';
import type { publicView } from '../pusher/outbox.ts';
import { WEBHOOK_PATH } from '../receiver/router.ts';
import { HEADERS } from '../signature/webhook-signature.ts';
import { DEPENDENCIES } from '../status/dependency-status.ts';
import { buildOpenApi, type OpenApiDocument } from './build.ts';
import { named, type ApiDescription, type ParameterDescription, type RouteDescription } from './describe.ts';
import { OPENAPI_PATH } from './router.ts';

// ---- answers ----

const iso = z.string().describe('ISO 8601 time (UTC)');
const dismissal = z.strictObject({ reason: z.string(), by: z.string(), at: iso });

const eventStatus = z.strictObject({
  eventId: z.string(),
  eventType: z.string(),
  state: z.enum(['received', 'pending', 'retrying', 'applied', 'discarded_stale', 'dead', 'dismissed']),
  attempts: z.number().int(),
  lastError: z.string().optional(),
  receivedAt: iso,
  finishedAt: iso.optional(),
  dismissal: dismissal.optional(),
});
const deadMapping = z.strictObject({
  entityType: z.string(),
  serviceId: z.string(),
  externalId: z.string(),
  attempts: z.number().int(),
  lastError: z.string().optional(),
  dismissal: dismissal.optional(),
});
const nextCursor = z.string().nullable().describe('Pass it as `cursor` for the next page; null on the last page.');

const documentView = z.strictObject({
  externalId: z.string(),
  documentType: z.enum(DOCUMENT_TYPES),
  source: z.enum(['emr', 'api', 'cli']),
  status: documentListParams.status.unwrap(),
  statusReason: z.string().optional(),
  errorCode: z.string().optional().describe('Set when the document failed here, before the service took it (it can be retried).'),
  serviceId: z.string().optional(),
  releaseAfter: z.string().optional(),
  sentAt: z.string().optional(),
  attempts: z.number().int(),
  emrDocumentId: z.string().nullable(),
  createdAt: iso,
  updatedAt: iso,
});

// What the code returns must be what the schemas allow (checked by the compiler; the test checks more).
type Covers<Schema extends z.ZodType, Actual extends z.output<Schema>> = Actual;
export type AdminAnswersCovered = [Covers<typeof eventStatus, EventStatus>, Covers<typeof documentView, ReturnType<typeof publicView>>];

const schemas = {
  health: named('Health', z.strictObject({ status: z.literal('ok') })),
  readiness: named(
    'Readiness',
    z.strictObject({
      status: z.enum(['ready', 'not_ready']),
      checks: z
        .record(z.string(), z.enum(['ok', 'failing']))
        .describe(
          "Each check by name: database and workers decide the status; emr (its port's ping) and service (its base address answers) are reported only.",
        ),
    }),
  ),
  webhookAck: named(
    'WebhookAck',
    z.strictObject({ received: z.literal(true), duplicate: z.boolean().describe('The eventId was stored before: nothing new was filed.') }),
  ),
  webhookEvent: named('WebhookEvent', webhookEventSchema),
  status: named(
    'Status',
    z.strictObject({
      components: z.array(
        z.strictObject({
          name: z.enum(DEPENDENCIES),
          ok: z.boolean(),
          reason: z.string().nullable().describe('Why it is failing; null when ok.'),
          since: iso.describe('When it entered its current state.'),
        }),
      ),
    }),
  ),
  eventStatus: named('EventStatus', eventStatus),
  deadLetterPage: named('DeadLetterPage', z.strictObject({ events: z.array(eventStatus), mappings: z.array(deadMapping), nextCursor })),
  replayAllRequest: named('ReplayAllRequest', replayAllBody),
  replayAllResult: named('ReplayAllResult', z.strictObject({ replayed: z.strictObject({ events: z.number().int(), mappings: z.number().int() }) })),
  replayed: named('EventReplayed', z.strictObject({ replayed: eventStatus })),
  dismissRequest: named('DismissRequest', dismissBody),
  eventDismissed: named('EventDismissed', z.strictObject({ dismissed: eventStatus })),
  mappingDismissed: named('MappingDismissed', z.strictObject({ dismissed: deadMapping })),
  pushRequest: named('PushDocumentRequest', pushDocumentBody()),
  documentAccepted: named(
    'DocumentAccepted',
    z.strictObject({ document: documentView, created: z.boolean().describe('false: the externalId was known; nothing new was queued.') }),
  ),
  document: named('DocumentAnswer', z.strictObject({ document: documentView })),
  documentPage: named('DocumentPage', z.strictObject({ documents: z.array(documentView), nextCursor })),
};

/**
 * POST /admin/documents: `documentType` plus the interface's request of that type (src/contract/documents.ts),
 * with no field the interface does not define, at the top or in `file` (the route refuses those).
 */
function pushDocumentBody() {
  const file = z.strictObject(fileSchema.shape).describe('Exactly one of base64 or url.');
  return z.discriminatedUnion('documentType', [
    z.strictObject({ documentType: z.literal('lab_report'), ...labReportRequestSchema.shape, file }),
    z.strictObject({ documentType: z.literal('prescription'), ...prescriptionRequestSchema.shape, file }),
  ]);
}

// ---- routes ----

const text = (description: string): ParameterDescription => ({ schema: z.string(), description });
const OPEN = { auth: false } as const;
const ADMIN = { auth: true, errors: { 401: 'The admin token is missing or wrong.' } } as const;

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

const routes: RouteDescription[] = [
  {
    method: 'post',
    path: WEBHOOK_PATH,
    operationId: 'receiveWebhook',
    summary: 'Receive a signed webhook from the service',
    description:
      'Checks the HMAC over the raw bytes, stores the event durably in the inbox and answers 200 once it is on disk (a repeat of an eventId answers 200 with duplicate: true). The body is not parsed here: the processor parses it later with this schema and dead-letters what fails it.',
    tag: 'receiver',
    ...OPEN,
    headers: signatureHeaders,
    body: { schema: schemas.webhookEvent },
    responses: { 200: { description: 'Stored (or already stored).', body: schemas.webhookAck } },
    errors: {
      401: 'invalid_signature: a header is missing, the key or timestamp is wrong, or no signature matches (one answer for all).',
      413: 'payload_too_large: larger than WEBHOOK_MAX_BODY_BYTES; not stored.',
      503: 'The store cannot take the write now (disk full, read-only, locked); the service retries.',
    },
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    summary: 'Liveness: 200 while the process runs',
    tag: 'operations',
    ...OPEN,
    responses: { 200: { description: 'Running.', body: schemas.health } },
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'readiness',
    summary: 'Readiness: the store takes writes and the workers run',
    tag: 'operations',
    ...OPEN,
    responses: { 200: { description: 'Ready.', body: schemas.readiness }, 503: { description: 'Not ready; `checks` says which.', body: schemas.readiness } },
  },
  {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics (on the admin listener when ADMIN_PORT is set)',
    tag: 'operations',
    ...OPEN,
    responses: { 200: { description: 'The Prometheus text exposition format.', contentType: 'text/plain', body: { type: 'string' } } },
  },
  {
    method: 'get',
    path: OPENAPI_PATH,
    operationId: 'openApi',
    summary: 'This document (on the admin listener when ADMIN_PORT is set)',
    tag: 'operations',
    ...OPEN,
    responses: { 200: { description: 'The OpenAPI 3.1 document of this API.', body: { type: 'object' } } },
  },
  {
    method: 'get',
    path: '/.well-known/jwks.json',
    operationId: 'jwks',
    summary: "The adapter's public key, for an EMR that registers it by a JWKS URL (FHIR_AUTH=smart only)",
    tag: 'operations',
    ...OPEN,
    responses: {
      200: {
        description: 'A JSON Web Key Set with the one public key the adapter signs its SMART assertions with.',
        body: { type: 'object', properties: { keys: { type: 'array', items: { type: 'object', required: ['kty', 'kid'] } } }, required: ['keys'] },
      },
    },
  },
  {
    method: 'get',
    path: '/admin/status',
    operationId: 'getStatus',
    summary: 'Each dependency (database, EMR, service): whether it works now, why not, since when',
    tag: 'admin',
    ...ADMIN,
    responses: { 200: { description: 'The dependencies.', body: schemas.status } },
  },
  {
    method: 'get',
    path: '/admin/dead-letters',
    operationId: 'listDeadLetters',
    summary: 'Dead letters (events, then refused mappings), a page at a time',
    tag: 'dead letters',
    ...ADMIN,
    query: listQuery(deadLetterListParams, {
      type: 'Only events of this type (mappings are not events: none is listed).',
      state: 'dead (the default) or dismissed.',
    }),
    responses: { 200: { description: 'A page.', body: schemas.deadLetterPage } },
    errors: { ...ADMIN.errors, 400: 'invalid_request: a bad or unknown parameter (named in `field`).' },
  },
  {
    method: 'post',
    path: '/admin/dead-letters/replay',
    operationId: 'replayAllDeadLetters',
    summary: 'Replay every dead letter, or every one of an event type',
    tag: 'dead letters',
    ...ADMIN,
    body: { schema: schemas.replayAllRequest, required: false },
    responses: { 200: { description: 'How many were put back.', body: schemas.replayAllResult } },
    errors: { ...ADMIN.errors, 400: 'invalid_request' },
  },
  {
    method: 'post',
    path: '/admin/dead-letters/mappings/{entityType}/{serviceId}/dismiss',
    operationId: 'dismissDeadMapping',
    summary: 'Dismiss a refused mapping, with a reason (kept, never sent)',
    tag: 'dead letters',
    ...ADMIN,
    body: { schema: schemas.dismissRequest },
    responses: { 200: { description: 'Dismissed.', body: schemas.mappingDismissed } },
    errors: {
      ...ADMIN.errors,
      400: 'invalid_request',
      404: 'not_found: no such mapping.',
      409: 'not_dead_letter: the mapping is not a dead letter, or already dismissed.',
    },
  },
  {
    method: 'post',
    path: '/admin/dead-letters/{eventId}/replay',
    operationId: 'replayDeadLetter',
    summary: "Replay a dead letter: back in its entity's order with fresh attempts",
    tag: 'dead letters',
    ...ADMIN,
    responses: { 200: { description: 'Queued again.', body: schemas.replayed } },
    errors: { ...ADMIN.errors, 404: 'not_found: no such event.', 409: 'not_dead_letter: the event is not a dead letter (or was dismissed).' },
  },
  {
    method: 'post',
    path: '/admin/dead-letters/{eventId}/dismiss',
    operationId: 'dismissDeadLetter',
    summary: 'Dismiss a dead letter, with a reason (kept for good, never replayed)',
    tag: 'dead letters',
    ...ADMIN,
    body: { schema: schemas.dismissRequest },
    responses: { 200: { description: 'Dismissed.', body: schemas.eventDismissed } },
    errors: {
      ...ADMIN.errors,
      400: 'invalid_request',
      404: 'not_found: no such event.',
      409: 'not_dead_letter: the event is not a dead letter, or already dismissed.',
    },
  },
  {
    method: 'get',
    path: '/admin/events/{eventId}',
    operationId: 'getEvent',
    summary: "Any stored event's processing state",
    tag: 'dead letters',
    ...ADMIN,
    responses: { 200: { description: 'The event.', body: schemas.eventStatus } },
    errors: { ...ADMIN.errors, 404: 'not_found: no such event.' },
  },
  {
    method: 'post',
    path: '/admin/documents',
    operationId: 'pushDocument',
    summary: 'Hand a document to the outbox, which checks it, sends it once and follows it',
    tag: 'documents',
    ...ADMIN,
    headers: { 'x-emr-bridge-source': text('`cli` marks a document pushed by `emr-bridge push`; anything else is `api`.') },
    body: { schema: schemas.pushRequest },
    responses: {
      202: { description: 'Queued.', body: schemas.documentAccepted },
      200: { description: 'The externalId is known: the document as it is.', body: schemas.documentAccepted },
    },
    errors: {
      ...ADMIN.errors,
      400: 'invalid_request: not a request of that documentType (the field is named).',
      413: 'file_too_large (the file), or payload_too_large (the body is larger than the admin API reads).',
      415: 'unsupported_file_type: only PDF, JPEG and PNG, judged by their bytes.',
      422: 'Refused by the local checks (the code says which).',
    },
  },
  {
    method: 'get',
    path: '/admin/documents',
    operationId: 'listDocuments',
    summary: 'Documents, newest first, a page at a time (by status, type and creation time)',
    tag: 'documents',
    ...ADMIN,
    query: listQuery(documentListParams, { type: 'Only this document type.', status: 'Only this status.' }),
    responses: { 200: { description: 'A page.', body: schemas.documentPage } },
    errors: { ...ADMIN.errors, 400: 'invalid_request: a bad or unknown parameter (named in `field`).' },
  },
  {
    method: 'post',
    path: '/admin/documents/{externalId}/retry',
    operationId: 'retryDocument',
    summary: 'Send again a document that failed here before the service took it',
    tag: 'documents',
    ...ADMIN,
    responses: { 200: { description: 'Queued again.', body: schemas.document } },
    errors: {
      ...ADMIN.errors,
      404: 'not_found: no such document.',
      409: 'not_retryable: it did not fail here (SENT, SUPPRESSED, FAILED by the service are final).',
    },
  },
  {
    method: 'get',
    path: '/admin/documents/{externalId}',
    operationId: 'getDocument',
    summary: 'One document: identifiers, status, reasons and times (never its label, patient or bytes)',
    tag: 'documents',
    ...ADMIN,
    responses: { 200: { description: 'The document.', body: schemas.document } },
    errors: { ...ADMIN.errors, 404: 'not_found: no such document.' },
  },
];

export const adminApi: ApiDescription = {
  title: 'emr-bridge adapter',
  description:
    'The adapter\'s HTTP API: the signed webhook receiver, health, readiness and metrics, and the admin API under /admin (Authorization: Bearer ADMIN_TOKEN). Every error answers {"error": {"code", "message", "field"?}}.',
  bearer: { name: 'adminToken', description: 'ADMIN_TOKEN (16+ characters); generated in zero-configuration mode.' },
  tags: [
    { name: 'receiver', description: 'What the service calls.' },
    { name: 'operations', description: 'Health, readiness, metrics and keys: no token.' },
    { name: 'admin', description: 'The adapter itself.' },
    { name: 'dead letters', description: 'Events and mappings parked for a person.' },
    { name: 'documents', description: 'The document outbox (EMR → service).' },
  ],
  routes,
};

/** What the adapter serves at /openapi.json. */
export const adminOpenApi = (): OpenApiDocument => buildOpenApi(adminApi);
