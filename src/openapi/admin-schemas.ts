// The answers of the adapter's HTTP API (./admin.ts), as zod schemas named for components.schemas; the
// compiler checks that what the routes return is what these allow.
import { z } from 'zod';
import { fileSchema, labReportRequestSchema, prescriptionRequestSchema } from '../contract/documents.ts';
import { DOCUMENT_TYPES, webhookEventSchema } from '../contract/events.ts';
import { dismissBody, replayAllBody } from '../processor/admin-router.ts';
import type { EventStatus } from '../processor/index.ts';
import { documentListParams } from '../pusher/admin-router.ts';
import type { publicView } from '../pusher/outbox.ts';
import { DEPENDENCIES } from '../status/dependency-status.ts';
import { named } from './describe.ts';

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

export const adminSchemas = {
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
