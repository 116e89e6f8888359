// POST /webhooks/service: raw bytes first (with a size limit), then the signature, then the durable
// inbox, then 2xx. Nothing is parsed or processed here; the processor does that in the background.
// With tracing on, the receipt is a span (its parent the request's `traceparent`, when it has one) marking the
// inbox commit, and its trace context is stored with the row: the processing joins that trace.
import Router from '@koa/router';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { AppError, UnauthorizedError } from '../errors.ts';
import { routeDirectly } from '../app/app.ts';
import type { Inbox } from '../inbox/inbox.ts';
import { verifyWebhook, WebhookVerificationError } from '../signature/webhook-signature.ts';
import { incomingTraceparent, inSpan, SPAN_EVENTS, SPAN_NAMES, type SpanScope } from '../tracing/spans.ts';
import { readBodyPieces } from './body-reader.ts';
import { identifyEvent, keptHeaders } from './event-identity.ts';
import { type OversizedDeps, receiveOversized } from './quarantine-intake.ts';

export const WEBHOOK_PATH = '/webhooks/service';

/** What the receiver takes: the inbox, and what an oversized webhook's path takes too (./quarantine-intake.ts). */
export interface ReceiverDeps extends OversizedDeps {
  inbox: Inbox;
  /**
   * Told of every webhook as it arrives, and (through what it returns) once it is answered: while they queue, the
   * processor gives way (src/work/intake-priority.ts).
   */
  arrived?: () => () => void;
}

class PayloadTooLargeError extends AppError {
  /** `read`: what was read of the body before it was found too large (nothing when its Content-Length said so). */
  constructor(
    limit: number,
    readonly read: readonly Buffer[] = [],
  ) {
    super({ code: 'payload_too_large', status: 413, message: `body larger than ${limit} bytes` });
  }
}

async function readBody(req: import('node:http').IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new PayloadTooLargeError(limit);
  if (req.headers['content-length'] === undefined) {
    // No length given (chunked): read by hand, so that what was read goes on into the quarantine's read.
    const r = await readBodyPieces(req, { keepBytes: limit, capBytes: limit });
    if (r.overCap) throw new PayloadTooLargeError(limit, [...(r.kept ?? []), r.last!]);
    return Buffer.concat(r.kept ?? [], r.total);
  }
  try {
    return await getRawBody(req, { limit });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw new PayloadTooLargeError(limit);
    throw err;
  }
}

/**
 * The webhook route. createApp answers it ahead of its middleware and routers' dispatch (routeDirectly);
 * the router keeps it too, for a router mounted on its own and for 405 on the path's other methods.
 */
export function createReceiverRouter(deps: ReceiverDeps): Router {
  const handle = webhookHandler(deps);
  const router = new Router();
  router.post(WEBHOOK_PATH, handle);
  return routeDirectly(router, { method: 'POST', path: WEBHOOK_PATH, handle });
}

/** The receipt's span attributes known before anything is read, and those of its answers (never mutated). */
const RECEIPT = Object.freeze({ 'http.request.method': 'POST', 'http.route': WEBHOOK_PATH });
const ANSWERED = Object.freeze({ 'http.response.status_code': 200 });
/** A duplicate is said; a first delivery, nearly every one, is not (one attribute fewer to export per webhook). */
const DUPLICATE_ANSWERED = Object.freeze({ 'http.response.status_code': 200, 'emr_bridge.event.duplicate': true });

function webhookHandler(deps: ReceiverDeps): (ctx: Context) => Promise<void> {
  const receive = receiveWebhook(deps);
  const handle = (ctx: Context) =>
    inSpan(SPAN_NAMES.webhook, RECEIPT, (scope) => receive(ctx, scope), { kind: 'server', parent: incomingTraceparent(ctx.req.headers.traceparent) });
  const { arrived } = deps;
  if (!arrived) return handle;
  return async (ctx) => {
    const answered = arrived();
    try {
      await handle(ctx);
    } finally {
      answered();
    }
  };
}

function receiveWebhook(deps: ReceiverDeps): (ctx: Context, span: SpanScope) => Promise<void> {
  return async (ctx, span) => {
    const started = performance.now();
    let body: Buffer;
    try {
      body = await readBody(ctx.req, deps.maxBodyBytes);
    } catch (err) {
      if (err instanceof PayloadTooLargeError && deps.quarantine) return receiveOversized(ctx, deps, err.read, started);
      deps.metrics.eventsRejected.inc({ reason: err instanceof PayloadTooLargeError ? 'too_large' : 'unreadable' });
      throw err;
    }
    try {
      verifyWebhook({
        body,
        headers: ctx.req.headers,
        secrets: deps.secrets(),
        keyId: deps.keyId(),
        toleranceSeconds: deps.toleranceSeconds,
        nowMs: deps.clock.now(),
      });
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      span.set({ 'emr_bridge.verification': err.reason, 'http.response.status_code': 401 });
      deps.metrics.eventsRejected.inc({ reason: err.reason });
      deps.logger.warn({ reason: err.reason }, 'webhook rejected');
      // One answer for every verification failure: the caller learns nothing about which check failed.
      throw new UnauthorizedError('signature verification failed', 'invalid_signature');
    }

    const { eventId, eventType } = identifyEvent(body, ctx.req.headers);
    span.set({ 'emr_bridge.verification': 'valid', 'emr_bridge.event.id': eventId, 'emr_bridge.event.type': eventType });
    let result: Awaited<ReturnType<Inbox['store']>>;
    try {
      result = await deps.inbox.store({ eventId, eventType, headers: keptHeaders(ctx.req.headers), body, traceContext: span.stored() });
      span.mark(SPAN_EVENTS.inboxCommitted);
    } catch (err) {
      span.set({ 'http.response.status_code': 503 });
      deps.metrics.eventsRejected.inc({ reason: 'inbox_unavailable' });
      throw err;
    }
    deps.logger.debug({ eventId, eventType, duplicate: result.duplicate }, 'webhook stored');
    span.set(result.duplicate ? DUPLICATE_ANSWERED : ANSWERED);
    ctx.status = 200;
    ctx.body = { received: true, duplicate: result.duplicate };
    deps.metrics.webhookAcknowledged(eventType, result.duplicate, (performance.now() - started) / 1000);
  };
}
