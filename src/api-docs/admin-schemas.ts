// The answers of the adapter's HTTP API (./admin.ts), as zod schemas named for components.schemas; the
// compiler checks that what the routes return is what these allow.
import { z } from 'zod';
import { fileSchema, labReportRequestSchema, prescriptionRequestSchema } from '../contract/documents.ts';
import type { auditView } from '../audit/admin-router.ts';
import { DOCUMENT_TYPES, webhookEventSchema } from '../contract/events.ts';
import { dismissBody, replayAllBody } from '../processor/admin-router.ts';
import type { eventDetail, eventSummaryView } from '../processor/events-router.ts';
import type { mappingView } from '../mappings/admin-router.ts';
import type { historyStepView } from '../pusher/outbox.ts';
import { EVENT_VIEW_STATES } from '../storage/event-views.ts';
import { MAPPING_ENTITY_TYPES } from '../contract/api.ts';
import type { EventStatus } from '../processor/index.ts';
import { documentListParams } from '../pusher/admin-router.ts';
import type { publicView } from '../pusher/outbox.ts';
import type { quarantinedView } from '../receiver/quarantine-admin-router.ts';
import { DEPENDENCIES } from '../status/dependency-status.ts';
import { CROSSWALK_ENTITY_TYPES } from '../storage/crosswalk.ts';
import { type downtimeView, startDowntimeBody } from '../status/emr-downtime-router.ts';
import { named } from '../openapi/describe.ts';

const iso = z.string().describe('ISO 8601 time (UTC)');
const dismissal = z.strictObject({ reason: z.string(), by: z.string(), at: iso });

const eventStatus = z.strictObject({
  eventId: z.string(),
  eventType: z.string(),
  state: z.enum(['received', 'pending', 'retrying', 'waiting', 'applied', 'discarded_stale', 'dead', 'dismissed']),
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

const eventHistoryStep = z.strictObject({
  at: iso,
  state: z.enum(['received', 'retrying', 'waiting', 'waiting_for_mapping', 'applied', 'discarded_stale', 'dead', 'replayed', 'dismissed']),
  attempt: z.number().int().describe('The attempt the change ended (0: none yet, or a fresh start after a replay).'),
  reason: z.string().optional().describe("A failure's code and message, or a dismissal's reason."),
});
const eventDetailView = eventStatus.extend({
  history: z.array(eventHistoryStep).describe('Every state the event went through, oldest first: received (at its received time), then each change.'),
  emrRefs: z
    .array(z.string())
    .describe('The EMR records the event wrote or claimed when applied, as the EMR module names them (FHIR: `Patient/12`); empty before.'),
  body: z
    .enum(['stored', 'pruned'])
    .describe(
      'Whether the webhook body is still stored (sealed at rest), or was pruned by retention (RETENTION_BODY_DAYS after the event finished or was dismissed); the eventId stays for dedupe.',
    ),
});
const eventSummary = z.strictObject({
  eventId: z.string(),
  eventType: z.string(),
  entityKey: z
    .string()
    .nullable()
    .describe('`appointment:<serviceId>`, `patient:<serviceId>`, `document:<externalId>`; null before intake or when unparseable.'),
  state: z.enum(EVENT_VIEW_STATES),
  attempts: z.number().int(),
  lastError: z.string().optional(),
  receivedAt: iso,
  finishedAt: iso.optional(),
  waitingFor: z
    .strictObject({ entityType: z.string(), serviceId: z.string() })
    .optional()
    .describe('A waiting event: the first record it lacks, in the order patient, doctor, location (map it in the crosswalk).'),
});
const documentHistoryStep = z.strictObject({
  at: iso,
  status: z.enum(['queued', 'SENT', 'HELD', 'FAILED', 'SUPPRESSED', 'REJECTED', 'retrying', 'retried']),
  attempt: z.number().int().optional().describe("The send attempt, for a send's outcome or retry."),
  detail: z.string().optional().describe('An error code, or the status reason.'),
});
const mappingFound = z.strictObject({
  entityType: z.enum(MAPPING_ENTITY_TYPES),
  serviceId: z.string(),
  emrId: z.string(),
  emrRef: z.string().describe('The EMR record as the EMR module names it (FHIR: `Patient/12`).'),
  posted: z.boolean().describe('Whether the service has it (posted by the mapping outbox, or never needed); false while queued, dead or dismissed.'),
});

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
  documentSize: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe("The file's size in bytes, kept once its bytes are removed (a final status); absent when it came as a URL."),
  documentSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .describe("The SHA-256 of the file's bytes (lowercase hex), kept with its size."),
  createdAt: iso,
  updatedAt: iso,
});

const quarantined = z.strictObject({
  eventId: z.string(),
  eventType: z.string(),
  size: z.number().int().describe("The body's bytes as received."),
  fitsLimit: z.boolean().describe('Whether size is at most WEBHOOK_MAX_BODY_BYTES now: only then can it be applied.'),
  receivedAt: iso,
  state: z.enum(['quarantined', 'applied', 'dismissed']),
  applied: z.strictObject({ by: z.string(), at: iso }).optional(),
  dismissal: dismissal.optional(),
});

const plannedDowntime = z.strictObject({ until: iso.describe('When it ends.'), reason: z.string() });
const downtimeInForce = z
  .strictObject({
    until: iso.describe('When it ends (windows that overlap or follow at once are one).'),
    reason: z.string().describe("The operator's reason, or the EMR_DOWNTIME window it is."),
    source: z.enum(['operator', 'schedule']).describe('Set through the admin API or the console, or an EMR_DOWNTIME window.'),
  })
  .nullable()
  .describe('The planned downtime in force now; null when none is.');

const auditEntry = z.strictObject({
  id: z.number().int().describe("The entry's id; pass the last one's as `before` for older entries."),
  at: iso,
  actor: z.string().describe("The credential's name (`admin` for ADMIN_TOKEN); `-` for a failed sign-in."),
  door: z.enum(['api', 'cli', 'console']),
  action: z.string().describe('dead_letter.replay, dead_letter.replay_all, dead_letter.dismiss, mapping.dismiss, document.push, document.retry, sign_in, …'),
  targets: z.array(z.string()).describe('The ids acted on: eventIds, externalIds, `entityType:serviceId`, `eventType:<type>`.'),
  from: z.string().describe("The client's address."),
  outcome: z.enum(['ok', 'denied', 'not_found', 'refused', 'failed']),
});

// What the code returns must be what the schemas allow (checked by the compiler; the test checks more).
type Covers<Schema extends z.ZodType, Actual extends z.output<Schema>> = Actual;
export type AdminAnswersCovered = [
  Covers<typeof eventStatus, EventStatus>,
  Covers<typeof documentView, ReturnType<typeof publicView>>,
  Covers<typeof eventDetailView, Awaited<ReturnType<typeof eventDetail>>>,
  Covers<typeof eventSummary, ReturnType<typeof eventSummaryView>>,
  Covers<typeof documentHistoryStep, ReturnType<typeof historyStepView>>,
  Covers<typeof mappingFound, ReturnType<typeof mappingView>>,
  Covers<typeof auditEntry, ReturnType<typeof auditView>>,
  Covers<typeof downtimeInForce, ReturnType<typeof downtimeView>>,
  Covers<typeof quarantined, ReturnType<typeof quarantinedView>>,
];

export const adminSchemas = {
  health: named('Health', z.strictObject({ status: z.literal('ok') })),
  readiness: named(
    'Readiness',
    z.strictObject({
      status: z.enum(['ready', 'not_ready']),
      checks: z
        .record(z.string(), z.enum(['ok', 'failing', 'downtime']))
        .describe(
          "Each check by name: database and workers decide the status; emr (its port's ping) and service (its base address answers) are reported only. downtime: the EMR is in planned downtime and is not asked.",
        ),
      downtime: z
        .record(z.string(), plannedDowntime)
        .optional()
        .describe('By check name (emr): the planned downtime in force, until when and why; absent when none is.'),
    }),
  ),
  webhookAck: named(
    'WebhookAck',
    z.strictObject({ received: z.literal(true), duplicate: z.boolean().describe('The eventId was stored before: nothing new was filed.') }),
  ),
  webhookQuarantined: named(
    'WebhookQuarantined',
    z.strictObject({
      received: z.literal(true),
      duplicate: z.boolean().describe('The eventId was in the quarantine already: nothing new was kept.'),
      quarantined: z.literal(true),
    }),
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
          downtime: plannedDowntime.optional().describe('In planned downtime now (the EMR): no call is made to it until then.'),
        }),
      ),
      capabilities: z
        .strictObject({
          emr: z.strictObject({
            protocol: z.string().describe('EMR_PROTOCOL: fhir or hl7v2 (passed-in for an EMR port given to the runtime).'),
            documentOutcomes: z
              .enum(['emr', 'adapter'])
              .describe("Where a document's final status goes: written back to the EMR (FHIR: a Communication), or kept in the adapter only (HL7 v2)."),
            documents: z.enum(['scanned', 'pushed']).describe('How documents reach the adapter: scanned in the EMR on a schedule, or pushed by the EMR.'),
          }),
        })
        .optional(),
      emrCalls: z
        .strictObject({
          limit: z
            .number()
            .int()
            .describe(
              'EMR calls allowed in flight now: EMR_MAX_CONCURRENCY, halved when the EMR pushes back (429, 503 with Retry-After) or its latency climbs, raised by one per round of answers as it recovers.',
            ),
          max: z.number().int().describe('EMR_MAX_CONCURRENCY: the most ever allowed.'),
          inFlight: z.number().int().describe('EMR calls in flight now.'),
          waiting: z.number().int().describe('Calls waiting for a slot now.'),
        })
        .optional()
        .describe('The EMR calls in flight and their limit (FHIR; an HL7 v2 EMR is bounded by its MLLP links instead).'),
      emrLinks: z
        .strictObject({
          configured: z.number().int().describe('HL7_SEND_CONNECTIONS: MLLP links to the EMR, each one message in flight.'),
          connected: z.number().int().describe('Links connected now.'),
        })
        .optional()
        .describe("An HL7 v2 EMR's MLLP links for what the adapter sends."),
      waiting: z
        .array(
          z.strictObject({
            entityType: z.enum(CROSSWALK_ENTITY_TYPES),
            events: z.number().int().describe('Events waiting whose first lacked record is of this type.'),
            since: iso.nullable().describe('When the oldest of them began to wait; null when none waits.'),
          }),
        )
        .optional()
        .describe('Events waiting for a person to map a record in the crosswalk (GET /admin/crosswalk?state=unmapped), per entity type.'),
    }),
  ),
  eventStatus: named('EventStatus', eventStatus),
  eventDetail: named('EventDetail', eventDetailView),
  eventPage: named(
    'EventPage',
    z.strictObject({
      events: z.array(eventSummary),
      next: z.string().nullable().describe('Pass it as `after` for the next (older) page; null on the last page.'),
    }),
  ),
  minutes: named(
    'EventMinutes',
    z.strictObject({
      minutes: z
        .array(z.strictObject({ minute: iso.describe("The minute's start."), received: z.number().int(), applied: z.number().int() }))
        .describe('The last 24 hours, one entry per minute (1,440), oldest first, the minute under way last; minutes with nothing are zeros.'),
    }),
  ),
  mappings: named('MappingsFound', z.strictObject({ mappings: z.array(mappingFound) })),
  deadLetterPage: named('DeadLetterPage', z.strictObject({ events: z.array(eventStatus), mappings: z.array(deadMapping), nextCursor })),
  replayAllRequest: named('ReplayAllRequest', replayAllBody),
  replayAllResult: named('ReplayAllResult', z.strictObject({ replayed: z.strictObject({ events: z.number().int(), mappings: z.number().int() }) })),
  replayed: named('EventReplayed', z.strictObject({ replayed: eventStatus })),
  dismissRequest: named('DismissRequest', dismissBody),
  eventDismissed: named('EventDismissed', z.strictObject({ dismissed: eventStatus })),
  mappingDismissed: named('MappingDismissed', z.strictObject({ dismissed: deadMapping })),
  mappingReplayed: named('MappingReplayed', z.strictObject({ replayed: deadMapping })),
  quarantinePage: named(
    'QuarantinePage',
    z.strictObject({
      events: z.array(quarantined),
      nextCursor,
      quarantine: z
        .strictObject({ events: z.number().int(), bytes: z.number().int(), capacityBytes: z.number().int() })
        .describe('What it holds now (quarantined events, the bytes of their bodies as stored) against WEBHOOK_QUARANTINE_BYTES.'),
      maxBodyBytes: z.number().int().describe('WEBHOOK_MAX_BODY_BYTES now.'),
    }),
  ),
  quarantineApplied: named(
    'QuarantineApplied',
    z.strictObject({
      applied: quarantined,
      inbox: z.enum(['stored', 'duplicate']).describe('duplicate: the inbox held its eventId already; it was not stored again.'),
    }),
  ),
  quarantineDismissed: named('QuarantineDismissed', z.strictObject({ dismissed: quarantined })),
  pushRequest: named('PushDocumentRequest', pushDocumentBody()),
  documentAccepted: named(
    'DocumentAccepted',
    z.strictObject({ document: documentView, created: z.boolean().describe('false: the externalId was known; nothing new was queued.') }),
  ),
  document: named('DocumentAnswer', z.strictObject({ document: documentView })),
  documentWithHistory: named(
    'DocumentWithHistory',
    z.strictObject({ document: documentView, history: z.array(documentHistoryStep).describe('Every status it went through, oldest first.') }),
  ),
  documentPage: named('DocumentPage', z.strictObject({ documents: z.array(documentView), nextCursor })),
  emrDowntime: named(
    'EmrDowntime',
    z.strictObject({
      downtime: downtimeInForce,
      windows: z.array(z.string()).describe('EMR_DOWNTIME: `<cron>@<IANA zone>/<ISO 8601 duration>`, as configured.'),
      next: z
        .strictObject({ start: iso, until: iso, window: z.string() })
        .nullable()
        .describe('The next EMR_DOWNTIME window to start (within 40 days); null when none does.'),
    }),
  ),
  startEmrDowntimeRequest: named('StartEmrDowntimeRequest', startDowntimeBody),
  emrDowntimeStarted: named('EmrDowntimeStarted', z.strictObject({ downtime: downtimeInForce })),
  emrDowntimeEnded: named(
    'EmrDowntimeEnded',
    z.strictObject({ ended: z.boolean().describe('Whether a planned downtime was in force (false: nothing to end).'), downtime: downtimeInForce }),
  ),
  auditPage: named(
    'AuditPage',
    z.strictObject({
      entries: z.array(auditEntry),
      nextBefore: z.number().int().nullable().describe('Pass it as `before` for the next (older) page; null on the last page.'),
    }),
  ),
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
