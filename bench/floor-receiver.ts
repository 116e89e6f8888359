// The receiver design's floor (issue 14): the least a durable, verifying webhook receiver built from the
// same parts can do, kept here so the real one (`emr-bridge serve`) is measured against it in the same run.
// Koa + @koa/router, the raw body read with raw-body, the signature checked with the adapter's own
// verifyWebhook, then the row (eventId, eventType, the x-service-* headers, the raw body) written through a
// group commit (src/work/group-commit.ts) into SQLite with WAL and synchronous=FULL, and 200 only once the
// transaction holding it has committed. WAL checkpoints run on the adapter's worker thread, as in `serve`
// (src/sqlite/open.ts), so the floor pays for storage what the adapter pays. No metrics, logging, error
// middleware, readiness or processor/pusher workers.
//
// Run: SERVICE_KEY_ID=… SERVICE_SIGNING_SECRETS=… node bin/run-ts.js bench/floor-receiver.ts <db path> [port]
// Prints `listening on http://127.0.0.1:<port>` when ready; SIGTERM commits what is queued and exits.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Database from 'better-sqlite3';
import Koa from 'koa';
import getRawBody from 'raw-body';
import { checkpointOffTheEventLoop, closeDatabase } from '../src/sqlite/open.ts';
import { createGroupCommitter } from '../src/work/group-commit.ts';
import { createLogger } from '../src/logger.ts';
import { verifyWebhook, WebhookVerificationError } from '../src/signature/webhook-signature.ts';

const [dbPath, portArg] = process.argv.slice(2);
const keyId = process.env.SERVICE_KEY_ID;
const secrets = process.env.SERVICE_SIGNING_SECRETS?.split(',');
if (!dbPath || !keyId || !secrets) throw new Error('usage: SERVICE_KEY_ID=… SERVICE_SIGNING_SECRETS=… floor-receiver.ts <db path> [port]');

const db = new Database(dbPath);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
checkpointOffTheEventLoop(db, dbPath, { logger: createLogger({ level: 'warn' }) });
// The inbox's table as the adapter's migrations leave it (db/sqlite/001_inbox.sql without the index 005 dropped).
db.exec(`CREATE TABLE IF NOT EXISTS inbox_events (
  id INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, event_type TEXT NOT NULL,
  headers TEXT NOT NULL, body BLOB, received_at INTEGER NOT NULL)`);
const insert = db.prepare(
  'INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING',
);

interface Row {
  eventId: string;
  eventType: string;
  headers: string;
  body: Buffer;
}
const commitBatch = db.transaction((rows: Row[]) => rows.map((r) => insert.run(r.eventId, r.eventType, r.headers, r.body, Date.now()).changes === 0));
const committer = createGroupCommitter<Row, boolean>((rows) => commitBatch.immediate(rows));

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

const router = new Router();
router.post('/webhooks/service', async (ctx) => {
  const body = await getRawBody(ctx.req, { limit: 256 * 1024 });
  const headers = ctx.req.headers;
  try {
    verifyWebhook({ body, headers, secrets, keyId, toleranceSeconds: 300, nowMs: Date.now() });
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    ctx.status = 401;
    ctx.body = { error: 'invalid_signature' };
    return;
  }
  const kept: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && (k.startsWith('x-service-') || k === 'content-type')) kept[k] = String(v);
  const eventId = one(headers['x-service-event-id']);
  const eventType = one(headers['x-service-event-type']);
  if (!eventId || !eventType) {
    ctx.status = 400;
    ctx.body = { error: 'missing_event_id' };
    return;
  }
  const duplicate = await committer.submit({ eventId, eventType, headers: JSON.stringify(kept), body });
  ctx.status = 200;
  ctx.body = { received: true, duplicate };
});

const app = new Koa();
app.use(router.routes()).use(router.allowedMethods());
const server = createServer(app.callback());
server.listen(Number(portArg ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => {
    committer.flush();
    void closeDatabase(db).then(() => process.exit(0));
  });
  server.closeIdleConnections();
});
