// The simulator's integration API (/integration/v1/, the service's API the adapter calls) as an OpenAPI
// description, from the schemas src/simulator/integration-api.ts validates with.
import { z } from 'zod';
import { IDEMPOTENT_REPLAYED_HEADER, MAPPING_ENTITY_TYPES } from '../../contract/api.ts';
import { documentEnvelopeSchema, labReportRequestSchema, prescriptionRequestSchema } from '../../contract/documents.ts';
import { mappingRequestSchema } from '../integration-api.ts';
import { named, type ApiDescription } from '../../openapi/describe.ts';
import { reply, routesOf, tagsOf } from '../../openapi/route.ts';

const schemas = {
  labReport: named('LabReportRequest', labReportRequestSchema),
  prescription: named('PrescriptionRequest', prescriptionRequestSchema),
  envelope: named('DocumentEnvelope', documentEnvelopeSchema),
  mappingRequest: named('MappingRequest', mappingRequestSchema),
  mapping: named(
    'MappingEnvelope',
    z.strictObject({
      resource: z.strictObject({ type: z.literal('mapping'), entityType: z.enum(MAPPING_ENTITY_TYPES), serviceId: z.string(), externalId: z.string() }),
    }),
  ),
};

/** What every route may answer besides its own: the key, the rate limit, and the faults QA switches on. */
const common = {
  401: 'unauthorized: a missing or unknown API key.',
  429: "rate_limited: past the key's rate limit (or a fault); Retry-After says when to try again.",
  500: 'internal (a fault QA switched on, or a bug).',
  502: 'A fault QA switched on.',
  503: 'A fault QA switched on.',
};

const replayed = {
  [IDEMPOTENT_REPLAYED_HEADER]: { schema: z.literal('true'), description: 'Set when the externalId was seen before: the answer is the first one, replayed.' },
};

const documentRoutes = routesOf({ tag: 'documents', auth: true, errors: common }, (route) => {
  const push = (path: `/${string}`, operationId: string, what: string, body: typeof schemas.labReport) =>
    route(`post ${path}`, operationId, `Send a ${what} to a patient (idempotent by externalId)`, {
      description:
        'The patient is found by patientExternalId, else by patientPhone (created with patientName when unknown). The document is HELD (auto-send off, quiet hours, a sandbox key) or delivered: SENT, or FAILED with a reason; document.delivered or document.failed follows. A repeat of an externalId answers the first answer again.',
      body,
      responses: { 201: { description: 'Received (or replayed: see the header).', body: schemas.envelope, headers: replayed } },
      errors: {
        400: 'invalid_request: the body fails the schema (the field is named).',
        413: 'file_too_large: more than 15 MB.',
        415: 'unsupported_file_type: only PDF, JPEG and PNG, judged by their bytes.',
        422: 'file_url_rejected, file_url_unreachable, or patient_unresolvable.',
      },
    });
  return [
    push('/integration/v1/lab-reports', 'sendLabReport', 'lab report', schemas.labReport),
    push('/integration/v1/prescriptions', 'sendPrescription', 'prescription', schemas.prescription),
    route('get /integration/v1/documents/{externalId}', 'getDocument', "A document by the caller's externalId: its status now", {
      responses: { 200: reply('The document.', schemas.envelope) },
      errors: { 404: "not_found: no document with that externalId for this key's clinic." },
    }),
  ];
});

const mappingRoutes = routesOf({ tag: 'mappings', auth: true, errors: common }, (route) => [
  route('put /integration/v1/mappings/{entityType}/{serviceId}', 'putMapping', "Record the caller's id (externalId) for one of the service's records", {
    params: { entityType: { schema: z.enum(MAPPING_ENTITY_TYPES) }, serviceId: { schema: z.string(), description: "The service's id of the record." } },
    body: schemas.mappingRequest,
    responses: { 200: reply('Recorded (or already so).', schemas.mapping) },
    errors: {
      400: 'invalid_request: an unknown entityType, or no externalId.',
      404: "not_found: no such record in this key's clinic.",
      409: 'mapping_conflict: the record is mapped to another externalId.',
    },
  }),
]);

export const simulatorIntegrationApi: ApiDescription = {
  title: 'emr-bridge simulator: integration API',
  description:
    'The service\'s integration API as the bundled simulator serves it (/integration/v1/): documents sent to patients, lookups, mappings. Keys are presented as Authorization: Bearer <key> (POST /_sim/keys makes one). Every error answers {"error": {"code", "message", "field"?}}.',
  bearer: { name: 'apiKey', description: 'An API key of the clinic (live_… or sandbox_…: a sandbox key holds every document).' },
  tags: tagsOf({ documents: 'Lab reports and prescriptions sent to patients.', mappings: "The caller's ids for the service's records." }),
  routes: [...documentRoutes, ...mappingRoutes],
};
