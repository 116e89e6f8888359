// What the FHIR module answers about the records an EMR may own (the crosswalk's types): whether the adapter may
// create them (FHIR_CREATES, else the CapabilityStatement's create interaction), the one carrying the service's id,
// whether an id names a record (read, checked), and the records a person may choose from by name (and phone).
import type { HumanName, Location, Patient, Practitioner, Resource } from '@medplum/fhirtypes';
import { EmrError } from '../errors.ts';
import type { EmrPort, MappedEntityType, RecordSuggestion } from '../port.ts';
import type { CapabilityCheck } from './capabilities.ts';
import type { Claims } from './claims.ts';
import type { FhirHttp } from './http.ts';
import { readRecord } from './read.ts';
import { matchesOf } from './search.ts';
import type { CreatableType } from './settings.ts';

export const FHIR_TYPE_OF = { patient: 'Patient', doctor: 'Practitioner', location: 'Location' } as const satisfies Record<MappedEntityType, CreatableType>;

/** Suggestions shown at most. */
const SUGGESTIONS_MAX = 10;

export interface OwnedRecordDeps {
  http: FhirHttp;
  capabilities: CapabilityCheck;
  claims: Claims;
  /** FHIR_CREATES; unset: what the CapabilityStatement declares. */
  creates?: readonly CreatableType[];
}

const nameText = (n: HumanName | undefined): string => n?.text ?? [...(n?.given ?? []), n?.family].filter(Boolean).join(' ');

/** How a person recognises a record among suggestions: its name, and a patient's phone and birth date. */
function displayOf(r: Resource): string {
  if (r.resourceType === 'Location') return (r as Location).name ?? '';
  if (r.resourceType === 'Practitioner') return nameText((r as Practitioner).name?.[0]);
  const p = r as Patient;
  const phone = p.telecom?.find((t) => t.system === 'phone')?.value;
  return [nameText(p.name?.[0]), phone, p.birthDate].filter(Boolean).join(', ');
}

/** The name search a type answers to (a Location's `name`, a person's `name`), with a patient's phone when given. */
function suggestionQuery(type: CreatableType, q: { name: string; phone?: string }): string {
  const params = new URLSearchParams({ name: q.name, _count: String(SUGGESTIONS_MAX) });
  if (type === 'Patient' && q.phone) params.set('phone', q.phone);
  return `${type}?${params.toString()}`;
}

export function createOwnedRecords(deps: OwnedRecordDeps): Required<Pick<EmrPort, 'mayCreate' | 'findByServiceId' | 'recordExists' | 'suggest'>> {
  return {
    async mayCreate(entityType) {
      const type = FHIR_TYPE_OF[entityType];
      if (deps.creates) return deps.creates.includes(type);
      return (await deps.capabilities.current()).creates(type);
    },
    findByServiceId: (entityType, serviceId) => deps.claims.findByServiceId(FHIR_TYPE_OF[entityType], serviceId),
    async recordExists(entityType, emrId) {
      try {
        await readRecord(deps.http, FHIR_TYPE_OF[entityType], emrId);
        return true;
      } catch (err) {
        if (err instanceof EmrError && err.code === 'emr_rejected' && (err.httpStatus === 404 || err.httpStatus === 410)) return false;
        throw err;
      }
    },
    async suggest(entityType, query): Promise<RecordSuggestion[]> {
      const type = FHIR_TYPE_OF[entityType];
      const bundle = (await deps.http.call<unknown>('GET', suggestionQuery(type, query))).body;
      return matchesOf<Resource>(bundle, type)
        .filter((r) => r.id)
        .slice(0, SUGGESTIONS_MAX)
        .map((r) => ({ emrId: r.id!, display: displayOf(r) }));
    },
  };
}
