// Console sessions: held in this process's memory (one replica; with several, a balancer keeps a console
// user on one replica: see README "Console"). A session ends after CONSOLE_SESSION_MINUTES without a request
// (idle) and at the latest SESSION_LIFETIME_MS after sign-in (absolute), whichever comes first; signing out
// ends it at once. The cookie holds only a random id: HttpOnly, SameSite=Strict, Secure over https, scoped
// to /console, and given the idle timeout as its lifetime (renewed with each page).
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { Actor } from '../access/actor.ts';
import type { Clock } from '../clock.ts';

export const SESSION_COOKIE = 'emr_bridge_session';
/** A shift and a bit: past this a session ends even if in use, and its holder signs in again. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60_000;
export const CONSOLE_PATH = '/console';

export interface ConsoleSession {
  readonly id: string;
  readonly actor: Actor;
  /** This session's CSRF token: every form that changes state carries it (src/console/csrf.ts). */
  readonly csrf: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /** A one-time message for the next page (what an action did). */
  flash?: string;
}

export interface SessionStore {
  create(actor: Actor): ConsoleSession;
  /** The live session with this id, its idle time restarted; undefined when unknown, expired or ended. */
  use(id: string): ConsoleSession | undefined;
  end(id: string): void;
  /** Live sessions (for tests and the overview of who is signed in). */
  size(): number;
}

export const randomToken = (): string => randomBytes(32).toString('base64url');

export function createSessionStore(opts: { clock: Clock; idleMinutes: number; lifetimeMs?: number }): SessionStore {
  const idleMs = opts.idleMinutes * 60_000;
  const lifetimeMs = opts.lifetimeMs ?? SESSION_LIFETIME_MS;
  const sessions = new Map<string, ConsoleSession>();
  const live = (s: ConsoleSession, now: number) => now - s.lastSeenAt < idleMs && now - s.createdAt < lifetimeMs;
  const sweep = (now: number) => {
    for (const [id, s] of sessions) if (!live(s, now)) sessions.delete(id);
  };
  return {
    create(actor) {
      const now = opts.clock.now();
      sweep(now);
      const session: ConsoleSession = { id: randomToken(), actor, csrf: randomToken(), createdAt: now, lastSeenAt: now };
      sessions.set(session.id, session);
      return session;
    },
    use(id) {
      const s = sessions.get(id);
      if (!s) return undefined;
      const now = opts.clock.now();
      if (!live(s, now)) {
        sessions.delete(id);
        return undefined;
      }
      s.lastSeenAt = now;
      return s;
    },
    end: (id) => void sessions.delete(id),
    size: () => sessions.size,
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
