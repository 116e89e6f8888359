// The FHIR R4 implementation of the EmrPort. Records are claimed by identifier=<FHIR_IDENTIFIER_SYSTEM>|
// <serviceId>: with conditional create where the server declares it (a repeated claim after a crash finds
// the first record), by search-then-create where it does not (the caller's per-entity lock keeps that to
// one record); an appointment and the records it names in one transaction Bundle where the server declares
// transactions too (./transaction.ts). A patient the service knows by an EMR id (its externalId) is that EMR
// record, marked, not a new one; a Patient the adapter creates carries the record-origin mark, and only such a
// record takes the service's name and phone (./mapping.ts). Appointments are created free-standing or booked
// into the doctor's Slots (./appointments.ts); every change is written under If-Match (./changes.ts). The records
// an EMR may own are matched, not created, where it does not let the adapter create them (./owned-records.ts).
// Every call signs in as FHIR_AUTH says (./auth).
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../logger.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import type { AdaptiveLimit } from '../../work/adaptive-limit.ts';
import type { EmrPort } from '../port.ts';
import type { FhirAuthSettings } from './auth/index.ts';
import { createAppointmentOperations } from './appointments.ts';
import { createCapabilityCheck } from './capabilities.ts';
import { createChanges } from './changes.ts';
import { createClaims } from './claims.ts';
import { listDocumentsChangedSince, recordDocumentOutcome } from './documents.ts';
import { createFhirHttp, type FhirHttp } from './http.ts';
import { createPatientOperations } from './patients.ts';
import { locationResource, practitionerResource } from './mapping.ts';
import { fhirRecordRefs } from './refs.ts';
import { createOwnedRecords } from './owned-records.ts';
import type { CreatableType } from './settings.ts';

export interface FhirEmrOptions {
  baseUrl: string;
  identifierSystem: string;
  timeoutMs: number;
  labReportTypeCodes: string[];
  prescriptionTypeCodes: string[];
  auth: FhirAuthSettings;
  /** Largest document content read from the EMR (bytes). */
  maxContentBytes: number;
  clock: Clock;
  logger: Logger;
  /** Where emr_bridge_patient_snapshot_differences_total is registered; unset: counted nowhere. */
  metrics?: Pick<Metrics, 'registry'>;
  /** Calls in flight at once (EMR_MAX_CONCURRENCY, adapted); unset: a fixed 16. */
  limit?: AdaptiveLimit;
  /** FHIR_CREATES: which records the adapter may create; unset: what the CapabilityStatement declares. */
  creates?: readonly CreatableType[];
  /** FHIR_APPOINTMENT_BOOKING: free-standing Appointments (default), or booked into the doctor's Slots. */
  booking?: 'create' | 'slot';
}

export interface FhirEmr extends EmrPort {
  /** The HTTP client (tests and benchmarks read its token source). */
  http: FhirHttp;
}

export function createFhirEmr(opts: FhirEmrOptions): FhirEmr {
  const http = createFhirHttp({
    baseUrl: opts.baseUrl,
    timeoutMs: opts.timeoutMs,
    auth: opts.auth,
    clock: opts.clock,
    maxContentBytes: opts.maxContentBytes,
    ...(opts.limit ? { limit: opts.limit } : {}),
  });
  const capabilities = createCapabilityCheck(http, opts.logger);
  const system = opts.identifierSystem;
  const settings = { identifierSystem: system, labReportTypeCodes: opts.labReportTypeCodes, prescriptionTypeCodes: opts.prescriptionTypeCodes };
  const claims = createClaims(http, system, capabilities);
  const changes = createChanges(http, capabilities);
  return {
    http,
    refs: fhirRecordRefs,
    ...createOwnedRecords({ http, capabilities, claims, ...(opts.creates ? { creates: opts.creates } : {}) }),
    ...createPatientOperations({ http, changes, system, claims, logger: opts.logger, metrics: opts.metrics }),
    ensurePractitioner: (d) => claims.findOrCreate(practitionerResource(system, d), d.serviceId),
    ensureLocation: (l) => claims.findOrCreate(locationResource(system, l), l.serviceId),
    ...createAppointmentOperations({ http, system, claims, changes, capabilities, logger: opts.logger, booking: opts.booking ?? 'create' }),
    listDocumentsChangedSince: (watermark) => listDocumentsChangedSince(http, settings, watermark),
    async readDocumentBytes(doc) {
      if ('base64' in doc.content) return Buffer.from(doc.content.base64, 'base64');
      return http.fetchBytes(doc.content.url);
    },
    recordDocumentOutcome: (o) => recordDocumentOutcome(http, system, o),
    async ping() {
      await capabilities.check();
      // Sign-in too: /metadata is public on most servers, so it alone would not show a refused client.
      await http.auth.authorization();
    },
    close: () => http.close(),
  };
}
