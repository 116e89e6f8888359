// The trace SDK, built from the trace settings (./settings.ts, ./tuning.ts) with every option given here: the SDK
// reads no environment variable of its own (@opentelemetry/sdk-trace reads none; the OTLP exporter falls back to
// the environment only for options left out, and none is), so the standard variables config.ts read, from the
// environment or a .env file, are the ones that count. Started by the runtime (src/runtime/adapter.ts) when
// an endpoint is set, and shut down last when the adapter closes, which exports every span still queued.
// Not started: nothing of OpenTelemetry is registered, and ./spans.ts makes no span.
//
// Spans are batched (BatchSpanProcessor) and posted over OTLP/HTTP, protobuf or JSON, by a background timer:
// a slow or absent collector never holds a request or an event; past the queue's bound, spans are dropped.
import { type Clock, systemClock } from '../clock.ts';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.ts';
import { join } from 'node:path';
import { context, type DiagLogger, diag, DiagLogLevel, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { loggingErrorHandler, setGlobalErrorHandler } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Logger } from '../logger.ts';
import { PACKAGE_ROOT } from '../paths.ts';
import type { TracingSettings } from './settings.ts';
import { useTracer } from './spans.ts';
import type { TlsFile, TraceTuning } from './tuning.ts';
/** A failing collector is logged once, then at most this often. */
const COMPLAINT_EVERY_MS = 60_000;

export interface RunningTracing {
  /** Exports what is queued, then stops making spans and unregisters everything. */
  shutdown(): Promise<void>;
}

export function samplerFor(s: TracingSettings['sampler']): Sampler {
  switch (s.name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(s.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(s.ratio) });
  }
}

/** A TLS file's content; one that cannot be read stops start-up, named by its variable, before anything is written. */
function readTlsFile(file: TlsFile | undefined): Buffer | undefined {
  if (!file) return undefined;
  try {
    return readFileSync(file.path);
  } catch (err) {
    throw new ConfigError([`${file.setting}: cannot read ${file.path} (${(err as { code?: string }).code ?? (err as Error).message})`]);
  }
}

/** The exporter's TLS options (used with an https endpoint only; the exporter drops them for http). */
function tlsOptions(tls: TraceTuning['export']['tls']): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const ca = readTlsFile(tls.ca);
  const cert = readTlsFile(tls.cert);
  const key = readTlsFile(tls.key);
  return { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
}

function exporterFor(s: TracingSettings): SpanExporter {
  const { timeoutMillis, compression, tls } = s.tuning.export;
  const options = {
    url: s.url,
    headers: { ...s.headers },
    timeoutMillis,
    compression: compression as never,
    concurrencyLimit: 4,
    httpAgentOptions: { keepAlive: true, ...tlsOptions(tls) },
  };
  return s.protocol === 'http/json' ? new JsonTraceExporter(options) : new ProtobufTraceExporter(options);
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The SDK's complaints (a collector that refuses or cannot be reached) as warnings, one a minute at most. */
function complaints(logger: Logger, clock: Clock): (message: string) => void {
  let last = -Infinity;
  let quiet = 0;
  return (message) => {
    const now = clock.now();
    if (now - last < COMPLAINT_EVERY_MS) {
      quiet++;
      return;
    }
    last = now;
    logger.warn({ component: 'tracing', error: message.slice(0, 300), ...(quiet ? { alsoSince: quiet } : {}) }, 'trace export failed');
    quiet = 0;
  };
}

function diagLogger(complain: (message: string) => void): DiagLogger {
  const ignore = () => undefined;
  return { error: (m) => complain(m), warn: (m) => complain(m), info: ignore, debug: ignore, verbose: ignore };
}

/** Builds the SDK and registers it (the context manager too: log lines inside a span carry its ids). */
/** `clock` paces the export warnings (real time by default: a simulated clock would not tell a minute). */
export function startTracing(settings: TracingSettings, logger: Logger, clock: Clock = systemClock): RunningTracing {
  // Built first: a TLS file that cannot be read throws before anything is registered.
  const exporter = exporterFor(settings);
  const contextManager = new AsyncLocalStorageContextManager().enable();
  if (!context.setGlobalContextManager(contextManager)) {
    contextManager.disable();
    throw new Error('tracing is already running in this process (two adapters with an OTLP endpoint in one process)');
  }
  const resource = defaultResource().merge(
    resourceFromAttributes({ ...settings.resourceAttributes, 'service.name': settings.serviceName, 'service.version': packageVersion() }),
  );
  const provider = new TracerProvider({
    resource,
    sampler: samplerFor(settings.sampler),
    spanProcessors: [new BatchSpanProcessor({ exporter, ...settings.tuning.batch })],
    spanLimits: { ...settings.tuning.spanLimits },
    forceFlushTimeoutMillis: settings.tuning.batch.exportTimeoutMillis,
  });
  trace.setGlobalTracerProvider(provider);
  const complain = complaints(logger, clock);
  setGlobalErrorHandler((err) => complain(err instanceof Error ? err.message : String(err)));
  diag.setLogger(diagLogger(complain), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  useTracer(provider.getTracer('emr-bridge', packageVersion()));

  let stopping: Promise<void> | undefined;
  return {
    shutdown() {
      stopping ??= (async () => {
        useTracer(undefined);
        try {
          await provider.shutdown();
        } catch (err) {
          complain(err instanceof Error ? err.message : String(err));
        } finally {
          trace.disable();
          context.disable();
          diag.disable();
          setGlobalErrorHandler(loggingErrorHandler());
        }
      })();
      return stopping;
    },
  };
}
