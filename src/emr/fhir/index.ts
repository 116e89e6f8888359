// The FHIR R4 implementation of the EmrPort. Records are claimed by identifier=<FHIR_IDENTIFIER_SYSTEM>|
// <serviceId>: with conditional create where the server declares it (a repeated claim after a crash finds
// the first record), by search-then-create where it does not (the caller's per-entity lock keeps that to
// one record). A patient the service knows by an EMR id (its externalId) is that EMR record, marked, not a
// new one; a Patient the adapter creates carries the record-origin mark, and only such a record takes the
// service's name and phone (./mapping.ts). Every call signs in as FHIR_AUTH says (./auth).
import type { Bundle, Patient, Resource } from '@medplum/fhirtypes';
import { Counter } from 'prom-client';
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../logger.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import { EmrError } from '../errors.ts';
import type { EmrPort, EmrRecord, PatientClaim } from '../port.ts';
import type { FhirAuthSettings } from './auth/index.ts';
import { createCapabilityCheck } from './capabilities.ts';
import { listDocumentsChangedSince, recordDocumentOutcome } from './documents.ts';
import { createFhirHttp, type FhirHttp } from './http.ts';
import {
  appointmentResource,
  isKnownStatus,
  locationResource,
  mergePatient,
  patientResource,
  practitionerResource,
  serviceIdsOf,
  withServiceIdentifier,
} from './mapping.ts';

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
}

export interface FhirEmr extends EmrPort {
  /** The HTTP client (tests and benchmarks read its token source). */
  http: FhirHttp;
}

export function createFhirEmr(opts: FhirEmrOptions): FhirEmr {
  const http = createFhirHttp({ baseUrl: opts.baseUrl, timeoutMs: opts.timeoutMs, auth: opts.auth, clock: opts.clock, maxContentBytes: opts.maxContentBytes });
  const capabilities = createCapabilityCheck(http, opts.logger);
  const system = opts.identifierSystem;
  const settings = { identifierSystem: system, labReportTypeCodes: opts.labReportTypeCodes, prescriptionTypeCodes: opts.prescriptionTypeCodes };

  async function findByServiceId(resourceType: string, serviceId: string): Promise<string | undefined> {
    const query = `${resourceType}?identifier=${encodeURIComponent(`${system}|${serviceId}`)}&_count=1`;
    return (await http.call<Bundle>('GET', query)).body.entry?.[0]?.resource?.id;
  }

  async function ensure(resource: Resource, serviceId: string): Promise<EmrRecord> {
    if ((await capabilities.current()).conditionalCreate(resource.resourceType)) {
      const res = await http.call<{ id: string }>('POST', resource.resourceType, resource, { 'if-none-exist': `identifier=${system}|${serviceId}` });
      return { id: res.body.id, created: res.status === 201 };
    }
    const found = await findByServiceId(resource.resourceType, serviceId);
    if (found) return { id: found, created: false };
    return { id: (await http.call<{ id: string }>('POST', resource.resourceType, resource)).body.id, created: true };
  }

  const differences = new Counter({
    name: 'emr_bridge_patient_snapshot_differences_total',
    help: 'Service patient snapshots that differ from a patient record the EMR owns (left as the EMR has it), by field.',
    labelNames: ['field'] as const,
    registers: opts.metrics ? [opts.metrics.registry] : [],
  });

  const patientPath = (id: string) => `Patient/${encodeURIComponent(id)}`;

  /**
   * The EMR's own patient the service knows by its id (externalId), marked with the service's id; undefined
   * when there is no such record, or it already stands for another service patient (never merged here).
   */
  async function adoptPatient(id: string, serviceId: string): Promise<string | undefined> {
    const log = opts.logger.child({ patientServiceId: serviceId, emrPatientId: id });
    let record: Patient;
    try {
      record = (await http.call<Patient>('GET', patientPath(id))).body;
    } catch (err) {
      if (!(err instanceof EmrError) || err.code !== 'emr_rejected') throw err;
      log.warn({ alert: true, httpStatus: err.httpStatus }, "the service's externalId for this patient names no EMR patient; a new one is claimed");
      return undefined;
    }
    const others = serviceIdsOf(record, system).filter((s) => s !== serviceId);
    if (others.length > 0) {
      log.warn(
        { alert: true, otherServiceIds: others },
        "the service's externalId for this patient names an EMR patient that stands for another service patient; a new one is claimed",
      );
      return undefined;
    }
    const linked = withServiceIdentifier(record, system, serviceId);
    if (linked) await http.call('PUT', patientPath(id), linked);
    return id;
  }

  async function ensurePatient(p: PatientClaim): Promise<EmrRecord> {
    const { externalId, ...input } = p;
    if (externalId) {
      const found = await findByServiceId('Patient', p.serviceId);
      if (found) return { id: found, created: false };
      const adopted = await adoptPatient(externalId, p.serviceId);
      if (adopted) return { id: adopted, created: false };
    }
    return ensure(patientResource(system, input), p.serviceId);
  }

  const warnUnknownStatus = (serviceId: string, status: string) => {
    if (!isKnownStatus(status)) opts.logger.warn({ serviceId, status }, 'unknown appointment status kept as an extension');
  };

  return {
    http,
    ensurePatient,
    async updatePatient(id, p) {
      // Read, change name and phone, write back: a PUT of a fresh resource would drop what the EMR holds.
      const path = patientPath(id);
      const merged = mergePatient((await http.call<Patient>('GET', path)).body, system, p);
      if (merged.next) await http.call('PUT', path, { ...merged.next, id });
      if (merged.differences.length > 0) {
        for (const field of merged.differences) differences.inc({ field });
        opts.logger.info(
          { patientServiceId: p.serviceId, emrPatientId: id, fields: merged.differences },
          "the service's snapshot differs from a patient the EMR owns; the EMR's record is kept",
        );
      }
      return { differences: merged.differences };
    },
    async linkPatient(id, serviceId) {
      const path = patientPath(id);
      const linked = withServiceIdentifier((await http.call<Patient>('GET', path)).body, system, serviceId);
      if (linked) await http.call('PUT', path, linked);
    },
    ensurePractitioner: (d) => ensure(practitionerResource(system, d), d.serviceId),
    ensureLocation: (l) => ensure(locationResource(system, l), l.serviceId),
    async ensureAppointment(a) {
      warnUnknownStatus(a.serviceId, a.status);
      return ensure(appointmentResource(system, a), a.serviceId);
    },
    async updateAppointment(id, a) {
      warnUnknownStatus(a.serviceId, a.status);
      await http.call('PUT', `Appointment/${encodeURIComponent(id)}`, { ...appointmentResource(system, a), id });
    },
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
