// The FHIR R4 implementation of the EmrPort. Records are claimed by identifier=<FHIR_IDENTIFIER_SYSTEM>|
// <serviceId>: with conditional create where the server declares it (a repeated claim after a crash finds
// the first record), by search-then-create where it does not (the caller's per-entity lock keeps that to
// one record). Every call signs in as FHIR_AUTH says (./auth).
import type { Bundle, Patient, Resource } from '@medplum/fhirtypes';
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../logger.ts';
import type { EmrPort, EmrRecord } from '../port.ts';
import type { FhirAuthSettings } from './auth/index.ts';
import { createCapabilityCheck } from './capabilities.ts';
import { listDocumentsChangedSince, recordDocumentOutcome } from './documents.ts';
import { createFhirHttp, type FhirHttp } from './http.ts';
import { appointmentResource, isKnownStatus, locationResource, mergePatient, patientResource, practitionerResource, withServiceIdentifier } from './mapping.ts';

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

  const warnUnknownStatus = (serviceId: string, status: string) => {
    if (!isKnownStatus(status)) opts.logger.warn({ serviceId, status }, 'unknown appointment status kept as an extension');
  };

  return {
    http,
    ensurePatient: (p) => ensure(patientResource(system, p), p.serviceId),
    async updatePatient(id, p) {
      // Read, change name and phone, write back: a PUT of a fresh resource would drop what the EMR holds.
      const path = `Patient/${encodeURIComponent(id)}`;
      const merged = mergePatient((await http.call<Patient>('GET', path)).body, system, p);
      if (merged) await http.call('PUT', path, { ...merged, id });
    },
    async linkPatient(id, serviceId) {
      const path = `Patient/${encodeURIComponent(id)}`;
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
    },
    close: () => http.close(),
  };
}
