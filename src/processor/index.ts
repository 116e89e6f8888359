// The processor's public surface, for the runtime and the CLI.
export { createProcessor, type Processor, type ProcessorDeps } from './processor.ts';
export { createProcessorAdminRouter } from './admin-router.ts';
export { createEventsAdminRouter } from './events-router.ts';
export { createDeadLetters, type DeadLetters, type EventStatus } from './dead-letters.ts';
export type { DocumentEventSink } from './apply.ts';
export type { PruneDocuments } from './retention.ts';
