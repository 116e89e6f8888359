// A webhook over WEBHOOK_MAX_BODY_BYTES: kept in the quarantine (src/storage/quarantine.ts) when it is correctly
// signed, instead of the 413 the service would retry for about 43 hours and then give up. In this order:
//
// 1. The signature headers, the key id and the timestamp, before a byte more of the body is read: a delivery that
//    fails them is refused (401, as below the limit) with its body unread.
// 2. A body declared larger than the ceiling of WEBHOOK_MAX_BODY_BYTES (16 MiB: it could never be applied) is
//    refused with 413, unread; one without Content-Length is read no further than that.
// 3. The body is read, its HMAC computed piece by piece as it arrives; the pieces are kept only while they could
//    fit the room left in the quarantine (and not at all for an eventId kept already).
// 4. A signature that does not match: 401, nothing kept. Then the eventId: one the inbox holds answers 200 as a
//    duplicate (as below the limit); one the quarantine holds, 202 as a duplicate; else it is admitted, 202.
// 5. No room (the stored bodies would pass WEBHOOK_QUARANTINE_BYTES): 413 as before the quarantine, counted by
//    emr_bridge_webhook_quarantine_full_total (docs/alerts.yml pages on it).
//
// Every answer that leaves body bytes unread closes the connection (Connection: close), so they are not read
// either to keep it alive.
import type { Context } from 'koa';
import type { Clock } from '../clock.ts';
import { WEBHOOK_BODY_CEILING } from '../config.ts';
import { AppError, UnauthorizedError, UnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { QuarantineMetrics } from '../metrics/quarantine-metrics.ts';
import { HEADERS, type StreamingVerifier, streamingVerifier, WebhookVerificationError } from '../signature/webhook-signature.ts';
import type { QuarantineStore } from '../storage/quarantine.ts';
import { readBodyPieces } from './body-reader.ts';
import { identifyEvent, keptHeaders } from './event-identity.ts';

export interface QuarantineIntake {
  store: Pick<QuarantineStore, 'usage' | 'whereIs' | 'admit'>;
  /** WEBHOOK_QUARANTINE_BYTES: the stored bodies' room; 0: no quarantine (413 as before). */
  capacityBytes: number;
  metrics: QuarantineMetrics;
}

/** What the receiver's handler passes on (src/receiver/router.ts ReceiverDeps adds the inbox). */
export interface OversizedDeps {
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Read on every request, so a rotation (or zero-configuration set-up) can change them without a restart. */
  keyId: () => string;
  secrets: () => readonly string[];
  toleranceSeconds: number;
  maxBodyBytes: number;
  /** Where a signed webhook over maxBodyBytes is kept; without it, 413 as before. */
  quarantine?: QuarantineIntake;
}

class OverLimitError extends AppError {
  constructor(message: string) {
    super({ code: 'payload_too_large', status: 413, message });
  }
}

const MAX_ID = 200;

/** The eventId header, as event-identity.ts takes it; undefined when absent (the body then names it). */
function eventIdHeader(ctx: Context): string | undefined {
  const v = ctx.req.headers[HEADERS.eventId];
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.length <= MAX_ID ? s : undefined;
}

/**
 * Answers a webhook found over deps.maxBodyBytes, `prefix` being what was read of its body already (nothing when
 * its Content-Length said so). Throws the refusals as AppErrors, as the receiver's handler does.
 */
export async function receiveOversized(ctx: Context, deps: OversizedDeps, prefix: readonly Buffer[], started: number): Promise<void> {
  const q = deps.quarantine;
  const refuse = (reason: string, err: AppError): never => {
    deps.metrics.eventsRejected.inc({ reason });
    // The rest of the body is not read, not even to keep the connection.
    if (!ctx.req.readableEnded) ctx.set('Connection', 'close');
    throw err;
  };
  if (!q || q.capacityBytes <= 0) return refuse('too_large', new OverLimitError(`body larger than ${deps.maxBodyBytes} bytes`));

  let verifier: StreamingVerifier;
  try {
    verifier = streamingVerifier({
      headers: ctx.req.headers,
      secrets: deps.secrets(),
      keyId: deps.keyId(),
      toleranceSeconds: deps.toleranceSeconds,
      nowMs: deps.clock.now(),
    });
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    return refused(err);
  }
  function refused(err: WebhookVerificationError): never {
    deps.logger.warn({ reason: err.reason, oversized: true }, 'webhook rejected');
    return refuse(err.reason, new UnauthorizedError('signature verification failed', 'invalid_signature'));
  }
  const tooLarge = () =>
    refuse('too_large', new OverLimitError(`body larger than ${WEBHOOK_BODY_CEILING} bytes, the most WEBHOOK_MAX_BODY_BYTES can be raised to`));
  const declared = Number(ctx.req.headers['content-length']);
  if (Number.isFinite(declared) && declared > WEBHOOK_BODY_CEILING) return tooLarge();

  const headerId = eventIdHeader(ctx);
  let known: 'inbox' | 'quarantine' | undefined;
  let room: number;
  try {
    known = headerId === undefined ? undefined : await q.store.whereIs(headerId);
    room = known ? 0 : q.capacityBytes - (await q.store.usage()).bytes;
  } catch (err) {
    return refuse('inbox_unavailable', unavailable(err));
  }

  const read = await readBodyPieces(ctx.req, { prefix, keepBytes: Math.max(0, room), capBytes: WEBHOOK_BODY_CEILING, onChunk: (c) => verifier.update(c) });
  if (read.overCap) return tooLarge();
  try {
    verifier.verify();
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    return refused(err);
  }

  const body = read.kept && Buffer.concat(read.kept, read.total);
  const { eventId, eventType } = body ? identifyEvent(body, ctx.req.headers) : { eventId: headerId, eventType: undefined };
  const type = eventType ?? String(ctx.req.headers[HEADERS.eventType] ?? 'unknown');
  if (known === 'inbox') return answer(ctx, deps, started, type, 200, false, true);
  if (known === 'quarantine') return answer(ctx, deps, started, type, 202, true, true);
  if (!body || eventId === undefined) return full(ctx, deps, q, eventId, read.total);

  let admission: Awaited<ReturnType<QuarantineIntake['store']['admit']>>;
  try {
    admission = await q.store.admit({ eventId, eventType: type, headers: keptHeaders(ctx.req.headers), body, receivedAt: deps.clock.now() }, q.capacityBytes);
  } catch (err) {
    return refuse('inbox_unavailable', unavailable(err));
  }
  switch (admission) {
    case 'stored':
      q.metrics.quarantined.inc();
      // A person has to act: raise the limit and apply it, or dismiss it.
      deps.logger.warn({ eventId, eventType: type, size: body.length, limit: deps.maxBodyBytes }, 'webhook over WEBHOOK_MAX_BODY_BYTES quarantined');
      return answer(ctx, deps, started, type, 202, true, false);
    case 'duplicate':
      return answer(ctx, deps, started, type, 202, true, true);
    case 'in_inbox':
      return answer(ctx, deps, started, type, 200, false, true);
    case 'full':
      return full(ctx, deps, q, eventId, read.total);
  }
}

const unavailable = (cause: unknown) =>
  cause instanceof UnavailableError ? cause : new UnavailableError('the quarantine cannot take the event now', cause, 'inbox_unavailable');

function answer(ctx: Context, deps: OversizedDeps, started: number, eventType: string, status: 200 | 202, quarantined: boolean, duplicate: boolean): void {
  ctx.status = status;
  ctx.body = quarantined ? { received: true, duplicate, quarantined: true } : { received: true, duplicate };
  deps.metrics.webhookAcknowledged(eventType, duplicate, (performance.now() - started) / 1000);
}

function full(ctx: Context, deps: OversizedDeps, q: QuarantineIntake, eventId: string | undefined, size: number): never {
  q.metrics.full.inc();
  deps.metrics.eventsRejected.inc({ reason: 'too_large' });
  deps.logger.error(
    { eventId, size, capacity: q.capacityBytes },
    'webhook over WEBHOOK_MAX_BODY_BYTES refused: the quarantine is full (WEBHOOK_QUARANTINE_BYTES)',
  );
  if (!ctx.req.readableEnded) ctx.set('Connection', 'close');
  throw new OverLimitError(`body larger than ${deps.maxBodyBytes} bytes, and the quarantine has no room for it`);
}
