// Console sessions, kept by the storage (src/storage/console-sessions.ts): every replica knows every session, so
// a balancer may send each page to any of them, and a restart signs nobody out. A session ends after
// CONSOLE_SESSION_MINUTES without a request (idle) and at the latest SESSION_LIFETIME_MS after sign-in (absolute),
// whichever comes first; signing out ends it at once. The cookie holds only a random token, and the database only
// its SHA-256: HttpOnly, SameSite=Strict, Secure over https, scoped to /console, and given the idle timeout as its
// lifetime (renewed with each page). The idle time is written back at most once a TOUCH_EVERY_MS (a write per
// page, and per chart refresh, would be an fsync each), so a session may end up to that much before its full idle.
import { createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { Actor } from '../actor.ts';
import type { Clock } from '../clock.ts';
import type { ConsoleSessionStore, SessionExpiry } from '../storage/console-sessions.ts';

export const SESSION_COOKIE = 'emr_bridge_session';
/** A shift and a bit: past this a session ends even if in use, and its holder signs in again. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60_000;
export const CONSOLE_PATH = '/console';
/** The idle time is written back at most this often (or a tenth of the idle timeout, if shorter). */
export const TOUCH_EVERY_MS = 60_000;

export interface ConsoleSession {
  /** The cookie's token: held by this request only, never stored. */
  readonly id: string;
  readonly actor: Actor;
  /** This session's CSRF token: every form that changes state carries it (src/console/csrf.ts). */
  readonly csrf: string;
  readonly createdAt: number;
  /** A one-time message (what an action did) waits for the next page. */
  readonly hasFlash: boolean;
}

export interface SessionStore {
  create(actor: Actor): Promise<ConsoleSession>;
  /** The live session with this token, its idle time restarted; undefined when unknown, expired or ended. */
  use(id: string): Promise<ConsoleSession | undefined>;
  end(id: string): Promise<void>;
  /** Leaves a one-time message for the session's next page. */
  setFlash(id: string, flash: string): Promise<void>;
  /** The waiting one-time message, taken (a later page no longer shows it). */
  takeFlash(session: ConsoleSession): Promise<string | undefined>;
}

export const randomToken = (): string => randomBytes(32).toString('base64url');

/** What the database keeps of a token. */
const hashOf = (token: string): string => createHash('sha256').update(token).digest('base64url');

export function createSessionStore(opts: { store: ConsoleSessionStore; clock: Clock; idleMinutes: number; lifetimeMs?: number }): SessionStore {
  const { store, clock } = opts;
  const expiry: SessionExpiry = { idleMs: opts.idleMinutes * 60_000, lifetimeMs: opts.lifetimeMs ?? SESSION_LIFETIME_MS };
  const touchEveryMs = Math.min(TOUCH_EVERY_MS, expiry.idleMs / 10);
  return {
    async create(actor) {
      const now = clock.now();
      const id = randomToken();
      const csrf = randomToken();
      await store.create({ tokenHash: hashOf(id), actor, csrf, createdAt: now, lastSeenAt: now }, now, expiry);
      return { id, actor, csrf, createdAt: now, hasFlash: false };
    },
    async use(id) {
      const now = clock.now();
      const tokenHash = hashOf(id);
      const s = await store.find(tokenHash, now, expiry);
      if (!s) return undefined;
      if (now - s.lastSeenAt >= touchEveryMs) await store.touch(tokenHash, now);
      return { id, actor: s.actor, csrf: s.csrf, createdAt: s.createdAt, hasFlash: s.flash !== undefined };
    },
    end: (id) => store.end(hashOf(id)),
    setFlash: (id, flash) => store.setFlash(hashOf(id), flash),
    takeFlash: async (session) => (session.hasFlash ? store.takeFlash(hashOf(session.id)) : undefined),
  };
}

/** Cookie options: HttpOnly, SameSite=Strict, Secure when the request came over https, only under /console. */
const cookieOptions = (ctx: Context, maxAgeMs: number) => ({
  httpOnly: true,
  sameSite: 'strict' as const,
  secure: ctx.secure,
  path: CONSOLE_PATH,
  maxAge: maxAgeMs,
  overwrite: true,
});

export function setSessionCookie(ctx: Context, session: ConsoleSession, idleMinutes: number): void {
  ctx.cookies.set(SESSION_COOKIE, session.id, cookieOptions(ctx, idleMinutes * 60_000));
}

export function clearCookie(ctx: Context, name: string): void {
  ctx.cookies.set(name, '', { ...cookieOptions(ctx, 0), expires: new Date(0) });
}

export const sessionCookie = (ctx: Context): string | undefined => ctx.cookies.get(SESSION_COOKIE) || undefined;
