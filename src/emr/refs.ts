// How an EMR names its records to a person: each module describes a record (the entity type the service maps,
// and the EMR's id) in its own words (FHIR: `Patient/12`; HL7 v2: `MRN 12`), and reads that form back for a
// lookup by EMR id (a bare id stands for any type). What an applied event stores of what it touched is written
// with `describe`, so the console and the event history show the EMR's own references.
import type { MappingEntityType } from '../contract/api.ts';

export interface RecordRefs {
  describe(entityType: MappingEntityType, emrId: string): string;
  /** A described reference back to the entity type and the bare id; a bare id stands alone. */
  parse(ref: string): { emrId: string; entityType?: MappingEntityType };
}

/** References as `<label><separator><id>`, one label per entity type: the shape both bundled modules use. */
export function labelledRefs(labels: Record<MappingEntityType, string>, separator: string): RecordRefs {
  const types = Object.keys(labels) as MappingEntityType[];
  return {
    describe: (entityType, emrId) => `${labels[entityType]}${separator}${emrId}`,
    parse(ref) {
      for (const entityType of types) {
        const prefix = `${labels[entityType]}${separator}`;
        if (ref.startsWith(prefix) && ref.length > prefix.length) return { emrId: ref.slice(prefix.length), entityType };
      }
      return { emrId: ref };
    },
  };
}
