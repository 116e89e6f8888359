// The mappings' public surface: which EMR record belongs to each service entity, the outbox that posts
// each new one to the service, its dead letters, backlog and retention.
export { createMappingStore, type MappingStore } from './store.ts';
export {
  createMappingBacklog,
  createMappingOutbox,
  createSentMappingPruner,
  type MappingBacklog,
  type MappingOutbox,
  type MappingOutboxDeps,
} from './outbox.ts';
export { createDeadMappings, type DeadMapping, type DeadMappingQuery, type DeadMappings } from './dead-mappings.ts';
