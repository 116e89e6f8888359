// The FHIR R4 implementation of the EmrPort. Records are created with conditional create on
// identifier=<FHIR_IDENTIFIER_SYSTEM>|<serviceId>, so repeating a claim after a crash finds the record
// made the first time instead of making a second one.
import type { Patient, Resource } from '@medplum/fhirtypes';
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../logger.ts';
import type { EmrPort, EmrRecord } from '../port.ts';
import { listDocumentsChangedSince, recordDocumentOutcome } from './documents.ts';
import { createFhirHttp } from './http.ts';
import { appointmentResource, isKnownStatus, locationResource, mergePatient, patientResource, practitionerResource, withServiceIdentifier } from './mapping.ts';

export interface FhirEmrOptions {
  baseUrl: string;
  identifierSystem: string;
  timeoutMs: number;
  labReportTypeCodes: string[];
  prescriptionTypeCodes: string[];
  clock: Clock;
  logger: Logger;
}

export function createFhirEmr(opts: FhirEmrOptions): EmrPort {
  const http = createFhirHttp(opts.baseUrl, opts.timeoutMs);
  const system = opts.identifierSystem;
  const settings = { identifierSystem: system, labReportTypeCodes: opts.labReportTypeCodes, prescriptionTypeCodes: opts.prescriptionTypeCodes };

  async function ensure(resource: Resource, serviceId: string): Promise<EmrRecord> {
    const res = await http.call<{ id: string }>('POST', resource.resourceType, resource, {
      'if-none-exist': `identifier=${system}|${serviceId}`,
    });
    return { id: res.body.id, created: res.status === 201 };
  }

  return {
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
      if (!isKnownStatus(a.status)) opts.logger.warn({ serviceId: a.serviceId, status: a.status }, 'unknown appointment status kept as an extension');
      return ensure(appointmentResource(system, a), a.serviceId);
    },
    async updateAppointment(id, a) {
      if (!isKnownStatus(a.status)) opts.logger.warn({ serviceId: a.serviceId, status: a.status }, 'unknown appointment status kept as an extension');
      await http.call('PUT', `Appointment/${encodeURIComponent(id)}`, { ...appointmentResource(system, a), id });
    },
    listDocumentsChangedSince: (watermark) => listDocumentsChangedSince(http, settings, watermark),
    async readDocumentBytes(doc) {
      if ('base64' in doc.content) return Buffer.from(doc.content.base64, 'base64');
      return http.fetchBytes(doc.content.url);
    },
    recordDocumentOutcome: (o) => recordDocumentOutcome(http, system, o),
    async ping() {
      await http.call('GET', 'metadata');
    },
    close: () => http.close(),
  };
}
