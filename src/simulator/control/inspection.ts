// Control routes for what happened, oldest first: webhook delivery attempts, messages that reached patients,
// and the service's alerts to the clinic.
import type Router from '@koa/router';
import { toIso } from '../../clock.ts';
import type { Db } from '../../sqlite/open.ts';

type Row = Record<string, unknown>;

/** A query parameter given once, as text. */
const single = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);

export function inspectionRoutes(router: Router, db: Db): void {
  const rows = (sql: string, ...args: unknown[]) => db.prepare(sql).all(...args) as Row[];
  router.get('/deliveries', (ctx) => {
    const sub = single(ctx.query.subscriptionId);
    const list = sub ? rows('SELECT * FROM delivery_log WHERE subscription_id = ? ORDER BY id', sub) : rows('SELECT * FROM delivery_log ORDER BY id');
    ctx.body = list.map(deliveryView);
  });
  router.get('/messages', (ctx) => {
    const phone = single(ctx.query.phone);
    const list = phone ? rows('SELECT * FROM messages WHERE phone = ? ORDER BY id', phone) : rows('SELECT * FROM messages ORDER BY id');
    ctx.body = list.map(messageView);
  });
  router.get('/alerts', (ctx) => {
    ctx.body = rows('SELECT * FROM alerts ORDER BY id').map(alertView);
  });
}

const deliveryView = (r: Row) => ({
  subscriptionId: r.subscription_id,
  eventId: r.event_id,
  eventType: r.event_type,
  attempt: r.attempt,
  statusCode: r.status_code,
  error: r.error,
  at: toIso(r.at as number),
});

const messageView = (r: Row) => ({
  documentServiceId: r.document_id,
  phone: r.phone,
  text: r.text,
  attachment: { name: r.attachment_name, mimeType: r.mime_type, size: r.size, sha256: r.sha256 },
  at: toIso(r.at as number),
});

const alertView = (r: Row) => ({ kind: r.kind, subscriptionId: r.subscription_id, eventId: r.event_id, message: r.message, at: toIso(r.at as number) });
