// The in-memory EMR as an EMR that owns some of its records (the FHIR module's ./fhir/owned-records.ts twin):
// the types the adapter may create (all by default; a test takes some away, as a vendor EMR's CapabilityStatement
// would), master data the EMR's staff keep (doctors and locations by EMR id, perhaps carrying a service id), a
// record found by the service's id, an id checked, and suggestions by name.
import type { EmrPort, MappedEntityType, RecordSuggestion } from '../port.ts';
import type { MemoryRecord } from './index.ts';

/** The in-memory record kind of each mapped entity type. */
export const KIND_OF = { patient: 'patient', doctor: 'practitioner', location: 'location' } as const;

export interface MasterRecord {
  entityType: MappedEntityType;
  name: string;
  phone?: string;
  /** The service's id, when the EMR's staff put it on the record. */
  serviceId?: string;
}

export interface MemoryOwnedState {
  /** Types the adapter may create; every type by default. */
  creatable: Set<MappedEntityType>;
  /** The EMR's own records, by EMR id. */
  masterData: Map<string, MasterRecord>;
  /** Adds a record as the EMR's staff would; returns its id. */
  addMasterRecord(record: MasterRecord): string;
}

interface OwnedDeps {
  records: Record<'patient' | 'practitioner' | 'location', Map<string, MemoryRecord>>;
  /** Every call counts and may fail (the EMR down, refusing). */
  gate(): void;
  nextId(): number;
  /** A patient by EMR id (one the adapter made, or the EMR's own). */
  patientById(id: string): MemoryRecord | undefined;
  emrPatients(): MemoryRecord[];
}

const nameOf = (data: unknown): string => String((data as { name?: unknown } | undefined)?.name ?? '');

export function createMemoryOwnedRecords(
  deps: OwnedDeps,
): MemoryOwnedState & Required<Pick<EmrPort, 'mayCreate' | 'findByServiceId' | 'recordExists' | 'suggest'>> {
  const masterData = new Map<string, MasterRecord>();
  const creatable = new Set<MappedEntityType>(['patient', 'doctor', 'location']);
  return {
    creatable,
    masterData,
    addMasterRecord(record) {
      const id = `${KIND_OF[record.entityType]}-emr-${deps.nextId()}`;
      masterData.set(id, record);
      return id;
    },
    mayCreate: async (entityType) => creatable.has(entityType),
    async findByServiceId(entityType, serviceId) {
      deps.gate();
      const claimed = deps.records[KIND_OF[entityType]].get(serviceId)?.id;
      if (claimed !== undefined) return claimed;
      return [...masterData.entries()].find(([, r]) => r.entityType === entityType && r.serviceId === serviceId)?.[0];
    },
    async recordExists(entityType, emrId) {
      deps.gate();
      if (masterData.get(emrId)?.entityType === entityType) return true;
      if (entityType === 'patient') return deps.patientById(emrId) !== undefined;
      return [...deps.records[KIND_OF[entityType]].values()].some((r) => r.id === emrId);
    },
    async suggest(entityType, query): Promise<RecordSuggestion[]> {
      deps.gate();
      const wanted = query.name.toLowerCase();
      const master = [...masterData.entries()].filter(([, r]) => r.entityType === entityType).map(([id, r]) => ({ id, name: r.name }));
      const patients = entityType === 'patient' ? deps.emrPatients().map((r) => ({ id: r.id, name: nameOf(r.data) })) : [];
      return [...master, ...patients].filter((r) => r.name.toLowerCase().includes(wanted)).map((r) => ({ emrId: r.id, display: r.name }));
    },
  };
}
