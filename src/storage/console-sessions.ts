// The operator console's sessions, kept by the storage so that every replica knows every session (a balancer may
// send each page to any replica) and a restart signs nobody out. A session is found by the SHA-256 of its cookie's
// token (src/console/session.ts hashes it): the database never holds a token that would open a session. Expiry is
// the caller's rule, passed in (idle and absolute); what has expired is deleted as it is met and at each sign-in.
import type { Actor, Role } from '../actor.ts';

export interface StoredSession {
  tokenHash: string;
  actor: Actor;
  /** The session's CSRF token (src/console/csrf.ts). */
  csrf: string;
  createdAt: number;
  lastSeenAt: number;
  /** The one-time message for the next page, if one is waiting. */
  flash?: string;
}

export interface SessionExpiry {
  /** Ended after this long without a request… */
  idleMs: number;
  /** …and at the latest this long after sign-in. */
  lifetimeMs: number;
}

export interface ConsoleSessionStore {
  /** Stores a new session, and deletes every session expired at `now`. */
  create(session: StoredSession, now: number, expiry: SessionExpiry): Promise<void>;
  /** The session with this hash if it is live at `now` (an expired one is deleted); undefined otherwise. */
  find(tokenHash: string, now: number, expiry: SessionExpiry): Promise<StoredSession | undefined>;
  /** Restarts a live session's idle time. */
  touch(tokenHash: string, now: number): Promise<void>;
  end(tokenHash: string): Promise<void>;
  setFlash(tokenHash: string, flash: string): Promise<void>;
  /** The waiting one-time message, removed as it is read (undefined when none). */
  takeFlash(tokenHash: string): Promise<string | undefined>;
}

/** A row of console_sessions, as both engines read it. */
export interface SessionRow {
  token_hash: string;
  actor_name: string;
  role: string;
  csrf: string;
  created_at: number | string;
  last_seen_at: number | string;
  flash: string | null;
}

export const toStoredSession = (r: SessionRow): StoredSession => ({
  tokenHash: r.token_hash,
  actor: { name: r.actor_name, role: r.role as Role },
  csrf: r.csrf,
  createdAt: Number(r.created_at),
  lastSeenAt: Number(r.last_seen_at),
  ...(r.flash !== null ? { flash: r.flash } : {}),
});

/** The oldest last_seen_at and created_at a live session may have at `now`. */
export const liveSince = (now: number, e: SessionExpiry) => ({ seen: now - e.idleMs, created: now - e.lifetimeMs });

/** Whether a stored session is live at `now` (the same rule as the SQL's `> seen AND > created`). */
export const isLive = (s: StoredSession, now: number, e: SessionExpiry): boolean => {
  const since = liveSince(now, e);
  return s.lastSeenAt > since.seen && s.createdAt > since.created;
};
