// Console sessions in SQLite (../console-sessions.ts): plain statements, each its own short transaction.
import type { Db } from '../../sqlite/open.ts';
import { type ConsoleSessionStore, isLive, liveSince, type SessionRow, toStoredSession } from '../console-sessions.ts';

export function createSqliteConsoleSessionStore(db: Db): ConsoleSessionStore {
  const insert = db.prepare('INSERT INTO console_sessions (token_hash, actor_name, role, csrf, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)');
  const sweep = db.prepare('DELETE FROM console_sessions WHERE last_seen_at <= ? OR created_at <= ?');
  const find = db.prepare('SELECT * FROM console_sessions WHERE token_hash = ?');
  const touch = db.prepare('UPDATE console_sessions SET last_seen_at = max(last_seen_at, ?) WHERE token_hash = ?');
  const end = db.prepare('DELETE FROM console_sessions WHERE token_hash = ?');
  const setFlash = db.prepare('UPDATE console_sessions SET flash = ? WHERE token_hash = ?');
  const readFlash = db.prepare('SELECT flash FROM console_sessions WHERE token_hash = ?').pluck();
  const clearFlash = db.prepare('UPDATE console_sessions SET flash = NULL WHERE token_hash = ? AND flash IS NOT NULL');
  // RETURNING gives the row as updated (NULL), so the message is read first, in the same transaction.
  const takeFlash = db.transaction((tokenHash: string) => {
    const flash = readFlash.get(tokenHash) as string | null | undefined;
    if (flash != null) clearFlash.run(tokenHash);
    return flash ?? undefined;
  });
  const create = db.transaction((s: Parameters<ConsoleSessionStore['create']>[0], seen: number, created: number) => {
    sweep.run(seen, created);
    insert.run(s.tokenHash, s.actor.name, s.actor.role, s.csrf, s.createdAt, s.lastSeenAt);
  });
  return {
    async create(session, now, expiry) {
      const since = liveSince(now, expiry);
      create.immediate(session, since.seen, since.created);
    },
    async find(tokenHash, now, expiry) {
      const row = find.get(tokenHash) as SessionRow | undefined;
      if (!row) return undefined;
      const session = toStoredSession(row);
      if (isLive(session, now, expiry)) return session;
      end.run(tokenHash);
      return undefined;
    },
    touch: async (tokenHash, now) => void touch.run(now, tokenHash),
    end: async (tokenHash) => void end.run(tokenHash),
    setFlash: async (tokenHash, flash) => void setFlash.run(flash, tokenHash),
    takeFlash: async (tokenHash) => takeFlash.immediate(tokenHash),
  };
}
