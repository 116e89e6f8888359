// The mappings' public surface: the outbox that posts each new mapping to the service. The rows (which EMR
// record belongs to each service entity, the outbox's rows, its dead letters) are src/storage's.
export { createMappingOutbox, type MappingOutbox, type MappingOutboxDeps } from './outbox.ts';
export type { MappingStore } from '../storage/mappings.ts';
export type { DeadMapping, DeadMappingQuery, DeadMappingStore } from '../storage/dead-letters.ts';
