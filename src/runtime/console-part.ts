// The operator console as a part of the adapter: its data port and actions over the storage, the status and
// the metrics (src/console/data-source.ts), the admin surface's credentials, throttle and auditor (one set,
// shared with the admin API), and CONSOLE_SESSION_MINUTES. createApp mounts it where the admin API is.
import type Router from '@koa/router';
import type { Clock } from '../clock.ts';
import { createConsoleActions, createConsoleData } from '../console/data-source.ts';
import { createConsoleRouter } from '../console/router.ts';
import type { EmrPort } from '../emr/index.ts';
import type { Inbox } from '../inbox/inbox.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { createDeadLetters } from '../processor/index.ts';
import type { DependencyStatus } from '../status/dependency-status.ts';
import type { EmrDowntime } from '../status/emr-downtime.ts';
import type { Quarantine } from '../receiver/quarantine.ts';
import type { Crosswalk } from '../crosswalk/crosswalk.ts';
import type { Storage } from '../storage/index.ts';
import type { AdminAccess } from './adapter-parts.ts';
import type { StartAdapterOptions } from './adapter.ts';

export function buildConsoleRouter(
  opts: StartAdapterOptions,
  parts: {
    storage: Storage;
    inbox: Inbox;
    clock: Clock;
    metrics: Metrics;
    status: DependencyStatus;
    access: AdminAccess;
    /** False while the adapter starts or stops: the console answers 503 pages. */
    workersRunning: () => boolean;
    emr: Pick<EmrPort, 'refs'>;
    /** The quarantine as an operator uses it (the admin API's too). */
    quarantine: Quarantine;
    /** The crosswalk as a person changes it (the admin API's too): the console's "Needs mapping". */
    crosswalk: Crosswalk;
    emrDowntime: EmrDowntime;
  },
): Router {
  const logger = opts.logger.child({ component: 'console' });
  const { storage, clock } = parts;
  return createConsoleRouter({
    data: createConsoleData({
      processor: storage.processor,
      documents: storage.documents,
      status: parts.status,
      database: parts.inbox,
      metrics: parts.metrics,
      clock,
      refs: parts.emr.refs,
      quarantine: storage.quarantine,
      crosswalk: storage.processor.crosswalk,
    }),
    actions: createConsoleActions({
      deadLetters: createDeadLetters({ stores: storage.processor.deadLetters, logger }),
      documents: storage.documents,
      logger,
    }),
    credentials: parts.access.credentials,
    auditor: parts.access.auditor,
    throttle: parts.access.signInThrottle,
    clock,
    logger,
    sessionMinutes: opts.config.console.sessionMinutes,
    sessionStore: storage.consoleSessions,
    available: parts.workersRunning,
    quarantine: parts.quarantine,
    emrDowntime: parts.emrDowntime,
    crosswalk: parts.crosswalk,
  });
}
