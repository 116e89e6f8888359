// What the console is built from: the data port and the actions (src/console/data.ts), the credential check
// and the audit trail (src/access, src/audit), the throttle of failed sign-ins, the clock, the logger, and
// the session settings. The composition root (src/runtime/adapter-parts.ts) passes them to createConsoleRouter.
import type { CredentialCheck } from '../actor.ts';
import type { SignInThrottle } from '../access/throttle.ts';
import type { Auditor } from '../audit/auditor.ts';
import type { Clock } from '../clock.ts';
import type { Crosswalk } from '../crosswalk/crosswalk.ts';
import type { Logger } from '../logger.ts';
import type { ConsoleActions, ConsoleData } from './data.ts';
import type { ConsoleSessionStore } from '../storage/console-sessions.ts';
import type { Quarantine } from '../receiver/quarantine.ts';
import type { EmrDowntime } from '../status/emr-downtime.ts';
import type { SessionStore } from './session.ts';

export interface ConsoleDeps {
  data: ConsoleData;
  actions: ConsoleActions;
  credentials: CredentialCheck;
  auditor: Auditor;
  /** Slows repeated failed sign-ins from one address; shared with the admin API's bearer check. */
  throttle: SignInThrottle;
  clock: Clock;
  logger: Logger;
  /** CONSOLE_SESSION_MINUTES: a session ends after this long without a request. */
  sessionMinutes: number;
  /** Where sessions are kept (the storage's, shared by every replica). */
  sessionStore: ConsoleSessionStore;
  /** False while the adapter starts or stops: every page answers 503. */
  available?: () => boolean;
  /** Signed webhooks over WEBHOOK_MAX_BODY_BYTES (src/receiver/quarantine.ts): its page, apply and dismiss. Absent: no such page. */
  quarantine?: Quarantine;
  /** The EMR's planned downtime (src/status/emr-downtime.ts): its page, and its buttons. Absent: no such page. */
  emrDowntime?: Pick<EmrDowntime, 'current' | 'nextScheduled' | 'windows' | 'refresh' | 'start' | 'end'>;
  /** The crosswalk as a person changes it (src/crosswalk/): the "Needs mapping" page and its import. Absent: no such page. */
  crosswalk?: Crosswalk;
}

/** What the pages use: the deps and the live sessions. */
export interface ConsoleContext extends ConsoleDeps {
  sessions: SessionStore;
}
