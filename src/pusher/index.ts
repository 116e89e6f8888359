// The pusher's public surface, for the runtime and the CLI.
export { createPusher, type Pusher, type PusherDeps } from './pusher.ts';
export { createPusherAdminRouter } from './admin-router.ts';
export { createDocumentEventSink } from './event-sink.ts';
export { checkDocument } from './checks.ts';
