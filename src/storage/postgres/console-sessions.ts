// Console sessions in PostgreSQL (../console-sessions.ts), shared by every replica: one statement each.
import { type ConsoleSessionStore, isLive, liveSince, type SessionRow, toStoredSession } from '../console-sessions.ts';
import type { Pool } from './pool.ts';

export function createPostgresConsoleSessionStore(pool: Pool): ConsoleSessionStore {
  return {
    async create(s, now, expiry) {
      const since = liveSince(now, expiry);
      await pool.query(
        `WITH sweep AS (DELETE FROM console_sessions WHERE last_seen_at <= $7 OR created_at <= $8)
         INSERT INTO console_sessions (token_hash, actor_name, role, csrf, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $5, $6)`,
        [s.tokenHash, s.actor.name, s.actor.role, s.csrf, s.createdAt, s.lastSeenAt, since.seen, since.created],
      );
    },
    async find(tokenHash, now, expiry) {
      const { rows } = await pool.query<SessionRow>('SELECT * FROM console_sessions WHERE token_hash = $1', [tokenHash]);
      if (!rows[0]) return undefined;
      const session = toStoredSession(rows[0]);
      if (isLive(session, now, expiry)) return session;
      await pool.query('DELETE FROM console_sessions WHERE token_hash = $1', [tokenHash]);
      return undefined;
    },
    async touch(tokenHash, now) {
      await pool.query('UPDATE console_sessions SET last_seen_at = greatest(last_seen_at, $1) WHERE token_hash = $2', [now, tokenHash]);
    },
    async end(tokenHash) {
      await pool.query('DELETE FROM console_sessions WHERE token_hash = $1', [tokenHash]);
    },
    async setFlash(tokenHash, flash) {
      await pool.query('UPDATE console_sessions SET flash = $1 WHERE token_hash = $2', [flash, tokenHash]);
    },
    async takeFlash(tokenHash) {
      // The row lock of the UPDATE makes two replicas' reads take the message once between them.
      const { rows } = await pool.query<{ flash: string }>(
        `UPDATE console_sessions s SET flash = NULL FROM (SELECT token_hash, flash FROM console_sessions WHERE token_hash = $1 FOR UPDATE) old
         WHERE s.token_hash = old.token_hash AND old.flash IS NOT NULL RETURNING old.flash`,
        [tokenHash],
      );
      return rows[0]?.flash;
    },
  };
}
