// Decisions on the interface's gaps that are not schemas (docs/decisions.md): how keys are presented
// (docs/decisions.md#api-key-presentation), error codes (docs/decisions.md#error-bodies), the retry
// ladder (docs/decisions.md#retry-ladder-timing), the pause (docs/decisions.md#pause-and-resume). Each
// decision lives here so it changes in one edit when the real service publishes its answer.

/** How the API key is presented to the service. Keys are opaque: never parsed by the adapter. */
export const authorizationHeader = (apiKey: string): string => `Bearer ${apiKey}`;

export const ERROR_CODES = {
  invalidRequest: 'invalid_request', // 400
  unauthorized: 'unauthorized', // 401
  notFound: 'not_found', // 404
  mappingConflict: 'mapping_conflict', // 409
  fileTooLarge: 'file_too_large', // 413
  unsupportedFileType: 'unsupported_file_type', // 415
  fileUrlRejected: 'file_url_rejected', // 422
  fileUrlUnreachable: 'file_url_unreachable', // 422
  patientUnresolvable: 'patient_unresolvable', // 422
  rateLimited: 'rate_limited', // 429
  internal: 'internal', // 500
} as const;

/** `{"error": {"code", "message", "field"?}}` */
export interface ErrorBody {
  error: { code: string; message: string; field?: string };
}

/** The replayed-externalId marker header. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/** Seconds after the previous failed attempt: attempt 1 is immediate, then these seven (8 attempts). */
export const RETRY_LADDER_SECONDS = [30, 120, 600, 3600, 21_600, 43_200, 86_400] as const;
export const MAX_DELIVERY_ATTEMPTS = RETRY_LADDER_SECONDS.length + 1;
export const WEBHOOK_TIMEOUT_MS = 10_000;
export const PAUSE_AFTER_CONSECUTIVE_FAILURES = 50;
export const DEFAULT_TOLERANCE_SECONDS = 300;

export const MAPPING_ENTITY_TYPES = ['appointment', 'patient', 'doctor', 'location'] as const;
export type MappingEntityType = (typeof MAPPING_ENTITY_TYPES)[number];
