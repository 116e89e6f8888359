// The one way emr-bridge makes spans: every part calls inSpan (and the few helpers beside it), none touches the
// OpenTelemetry API itself. While tracing is off (no endpoint: ./settings.ts) inSpan calls its function with a
// scope that does nothing, and nothing else happens: no span, no context, no promise of its own. While it is on
// (./provider.ts), a span is made with the attributes allowed (./attributes.ts), is the active one for whatever
// its function does (the spans of the calls inside are its children, log lines carry its ids), and ends when the
// function settles; a failure sets its status and `emr_bridge.error.code`, never the error's message.
//
// A trace crosses the inbox and the outboxes as a stored trace context: the W3C `traceparent` of the span that
// wrote the row (storedContext), kept in the row's trace_context column and given back as `parent` to the span
// of the work on that row, after a restart or in another replica alike.
import {
  type Context,
  context,
  isSpanContextValid,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { describeError } from '../errors.ts';
import { allowedAttributes, type SpanAttributes } from './attributes.ts';

export type { AttributeKey, SpanAttributes } from './attributes.ts';

/** What a span may record as an event: a moment in it with a name (and no attributes). */
export const SPAN_EVENTS = {
  /** The receipt's inbox commit: the event is durable (or was stored already). */
  inboxCommitted: 'inbox commit',
} as const;
export type SpanEventName = (typeof SPAN_EVENTS)[keyof typeof SPAN_EVENTS];

/** Every span name emr-bridge uses but the calls' own (FHIR, HL7, service), whose names say what they call. */
export const SPAN_NAMES = {
  webhook: 'POST /webhooks/service',
  processEvent: 'event process',
  mappingPost: 'mapping post',
  documentScan: 'document scan',
  documentFile: 'document file',
  documentSend: 'document send',
  documentFollowUp: 'document follow-up',
  documentWriteBack: 'document write-back',
} as const;

/** A span's name: one of SPAN_NAMES, or a call's (`FHIR PUT Appointment`, `HL7 SIU^S12`, `service PUT mappings`). */
export type SpanName = (typeof SPAN_NAMES)[keyof typeof SPAN_NAMES] | `FHIR ${string}` | `HL7 ${string}` | `service ${string}`;

export type SpanKindName = 'internal' | 'server' | 'client' | 'consumer' | 'producer';

const KINDS: Record<SpanKindName, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  consumer: SpanKind.CONSUMER,
  producer: SpanKind.PRODUCER,
};

export interface SpanOptions {
  kind?: SpanKindName;
  /**
   * The parent: a stored trace context (a row's trace_context, a request's traceparent), or null for none (a new
   * trace). Left out: the span active now, if any.
   */
  parent?: string | null;
}

/** What a function run in a span may do with it. */
export interface SpanScope {
  /** Adds attributes (identifiers only: the others are dropped). */
  set(attributes: SpanAttributes): void;
  /** Marks the span failed, with the failure's code (the function went on: a retry decided, a dead letter). */
  fail(err: unknown): void;
  /** The span's trace context, to store with the row it writes; undefined while tracing is off. */
  stored(): string | undefined;
  /** Records a moment of the span (SPAN_EVENTS). */
  mark(event: SpanEventName): void;
}

const NO_SCOPE: SpanScope = Object.freeze({
  set() {},
  fail() {},
  stored: () => undefined,
  mark() {},
});

const propagator = new W3CTraceContextPropagator();
const fromStored: TextMapGetter<string> = {
  get: (carrier, key) => (key === 'traceparent' ? carrier : undefined),
  keys: () => ['traceparent'],
};

let tracer: Tracer | undefined;

/** Set by ./provider.ts while tracing runs (undefined again once it stopped). */
export function useTracer(t: Tracer | undefined): void {
  tracer = t;
}

/** Whether spans are made at all. */
export const tracingOn = (): boolean => tracer !== undefined;

/** The context a stored trace context names: a new trace when there is none, or it does not parse. */
function contextOf(stored: string | null): Context {
  return stored ? propagator.extract(ROOT_CONTEXT, stored, fromStored) : ROOT_CONTEXT;
}

/**
 * The W3C traceparent (version 00) of the span in `ctx`: what a row stores and an outgoing request carries, as
 * W3CTraceContextPropagator.inject writes it, without its carrier (tracestate is not stored).
 */
function traceparentOf(ctx: Context): string | undefined {
  const c = trace.getSpanContext(ctx);
  if (c === undefined || !isSpanContextValid(c)) return undefined;
  return `00-${c.traceId}-${c.spanId}-${c.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
}

function failed(span: Span, err: unknown): void {
  const described = describeError(err);
  const code = described.code ?? described.type;
  span.setAttribute('emr_bridge.error.code', code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

/** A span's scope: one object with its methods on the prototype (nothing made per span but the object). */
class Scope implements SpanScope {
  constructor(
    private readonly span: Span,
    private readonly ctx: Context,
  ) {}
  set(attributes: SpanAttributes): void {
    // A span the sampler left out records nothing: its attributes are not even checked.
    if (this.span.isRecording()) this.span.setAttributes(allowedAttributes(attributes));
  }
  fail(err: unknown): void {
    failed(this.span, err);
  }
  stored(): string | undefined {
    return traceparentOf(this.ctx);
  }
  mark(event: SpanEventName): void {
    this.span.addEvent(event);
  }
}

/**
 * Runs `fn` in a new span named `name`: the span's parent is options.parent (a stored trace context) or, without
 * one, the span active now. Off: `fn` is called as it is, with a scope that does nothing.
 */
export function inSpan<T>(name: SpanName, attributes: SpanAttributes, fn: (scope: SpanScope) => Promise<T>, options?: SpanOptions): Promise<T> {
  const t = tracer;
  if (t === undefined) return fn(NO_SCOPE);
  const parent = options !== undefined && options.parent !== undefined ? contextOf(options.parent) : context.active();
  const span = t.startSpan(name, { kind: KINDS[options?.kind ?? 'internal'], attributes: allowedAttributes(attributes) }, parent);
  const ctx = trace.setSpan(parent, span);
  let result: Promise<T>;
  try {
    result = context.with(ctx, fn, undefined, new Scope(span, ctx));
  } catch (err) {
    failed(span, err);
    span.end();
    throw err;
  }
  return result.then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      failed(span, err);
      span.end();
      throw err;
    },
  );
}

/** The trace context of the span active now, to store with a row; undefined when none is (or tracing is off). */
export function storedContext(): string | undefined {
  return tracer === undefined ? undefined : traceparentOf(context.active());
}

/** Adds `traceparent` for the span active now to an outgoing request's headers (nothing while tracing is off). */
export function addTraceHeaders(headers: Record<string, string>): void {
  if (tracer === undefined) return;
  const traceparent = traceparentOf(context.active());
  if (traceparent !== undefined) headers.traceparent = traceparent;
}

/** A request's `traceparent` header when it holds a valid one: the receipt's parent. Null without one. */
export function incomingTraceparent(header: string | string[] | undefined): string | null {
  if (tracer === undefined || typeof header !== 'string') return null;
  return trace.getSpanContext(contextOf(header)) === undefined ? null : header;
}

/** `fn`, bound to the context active now: a callback run later (after a commit) still logs in this span. */
export function bindToSpan<F extends (...args: never[]) => unknown>(fn: F): F {
  return tracer === undefined ? fn : context.bind(context.active(), fn);
}

/** The trace id a stored trace context names (the console shows it), or undefined. */
export function traceIdOf(stored: string | null | undefined): string | undefined {
  const m = stored ? /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}/.exec(stored) : null;
  return m && !/^0+$/.test(m[1]!) ? m[1] : undefined;
}
