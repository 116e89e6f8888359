// Patients on the FHIR side: claimed by the service's id, or adopted when the service knows the patient by the
// EMR's own id (its externalId); a snapshot changes only a Patient the adapter created (./mapping.ts), and
// differences from one the EMR owns are counted and logged without values.
import type { Patient } from '@medplum/fhirtypes';
import { Counter } from 'prom-client';
import type { Logger } from '../../logger.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import { EmrError } from '../errors.ts';
import type { EmrPort, EmrRecord, PatientClaim, PatientField } from '../port.ts';
import type { Changes } from './changes.ts';
import type { Claims } from './claims.ts';
import type { FhirHttp } from './http.ts';
import { readRecord } from './read.ts';
import { mergePatient, patientResource, serviceIdsOf, withServiceIdentifier } from './mapping.ts';

interface PatientDeps {
  http: FhirHttp;
  /** Writes under If-Match, as the EMR takes changes (./changes.ts). */
  changes: Changes;
  system: string;
  claims: Claims;
  logger: Logger;
  metrics: Pick<Metrics, 'registry'> | undefined;
}

/**
 * The EMR's own patient the service knows by its id (externalId), marked with the service's id; undefined
 * when there is no such record, or it already stands for another service patient (never merged here).
 */
async function adoptPatient(deps: PatientDeps, id: string, serviceId: string): Promise<string | undefined> {
  const log = deps.logger.child({ patientServiceId: serviceId, emrPatientId: id });
  let record: Patient;
  try {
    record = await readRecord<Patient>(deps.http, 'Patient', id);
  } catch (err) {
    if (!(err instanceof EmrError) || err.code !== 'emr_rejected') throw err;
    log.warn({ alert: true, httpStatus: err.httpStatus }, "the service's externalId for this patient names no EMR patient; a new one is claimed");
    return undefined;
  }
  const others = serviceIdsOf(record, deps.system).filter((s) => s !== serviceId);
  if (others.length > 0) {
    log.warn(
      { alert: true, otherServiceIds: others },
      "the service's externalId for this patient names an EMR patient that stands for another service patient; a new one is claimed",
    );
    return undefined;
  }
  await deps.changes.change<Patient>('Patient', id, (current) => withServiceIdentifier(current, deps.system, serviceId));
  return id;
}

export function createPatientOperations(deps: PatientDeps): Pick<EmrPort, 'ensurePatient' | 'updatePatient' | 'linkPatient'> {
  const { system } = deps;
  const counter = new Counter({
    name: 'emr_bridge_patient_snapshot_differences_total',
    help: 'Service patient snapshots that differ from a patient record the EMR owns (left as the EMR has it), by field.',
    labelNames: ['field'] as const,
    registers: deps.metrics ? [deps.metrics.registry] : [],
  });
  return {
    async ensurePatient(p: PatientClaim): Promise<EmrRecord> {
      const { externalId, ...input } = p;
      if (externalId) {
        const found = await deps.claims.findByServiceId('Patient', p.serviceId);
        if (found) return { id: found, created: false };
        const adopted = await adoptPatient(deps, externalId, p.serviceId);
        if (adopted) return { id: adopted, created: false };
      }
      return deps.claims.findOrCreate(patientResource(system, input), p.serviceId);
    },
    async updatePatient(id, p) {
      // Read, change name and phone, write back under If-Match: a PUT of a fresh resource would drop what the EMR holds.
      let differences: PatientField[] = [];
      await deps.changes.change<Patient>('Patient', id, (current) => {
        const merged = mergePatient(current, system, p);
        differences = merged.differences;
        return merged.next && { ...merged.next, id };
      });
      if (differences.length > 0) {
        for (const field of differences) counter.inc({ field });
        deps.logger.info(
          { patientServiceId: p.serviceId, emrPatientId: id, fields: differences },
          "the service's snapshot differs from a patient the EMR owns; the EMR's record is kept",
        );
      }
      return { differences };
    },
    async linkPatient(id, serviceId) {
      await deps.changes.change<Patient>('Patient', id, (current) => withServiceIdentifier(current, system, serviceId));
    },
  };
}
