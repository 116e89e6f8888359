// The OpenTelemetry specification's environment variables, every one, each marked by what emr-bridge does with
// it: a platform (the OpenTelemetry Operator, a base image, a collector sidecar's env) may set any of them for
// every process, so none stops start-up; config.ts refuses only an OTEL_* name that is in no specification (a
// typo), naming the closest. Pure data. The list is the specification's "Environment Variable Specification"
// (configuration/sdk-environment-variables.md) and the OTLP exporter's (protocol/exporter.md), with the names
// of its released versions since 1.0 that were later removed (the Jaeger exporter's) or renamed.

/** What emr-bridge does with a variable. */
export type OtelVariableUse =
  /** It shapes traces, and emr-bridge reads it (./settings.ts, ./tuning.ts). */
  | { traces: true; read: true }
  /** It would shape traces, but emr-bridge's behaviour there is fixed; accepted and ignored, for the reason given. */
  | { traces: true; read: false; why: string }
  /** Another signal's, another exporter's, or another SDK's: accepted and ignored. */
  | { traces: false };

const READ = { traces: true, read: true } as const;
const OTHER = { traces: false } as const;
const fixed = (why: string): OtelVariableUse => ({ traces: true, read: false, why });

const GRPC_ONLY = fixed("gRPC's transport security; over OTLP/HTTP the endpoint's scheme (https) says it");
const DECLARATIVE = fixed('declarative configuration files are not read; the OTEL_* variables configure traces');

/** The OTLP exporter's variables (OTEL_EXPORTER_OTLP_<KEY> and OTEL_EXPORTER_OTLP_<SIGNAL>_<KEY>). */
const OTLP_KEYS = ['ENDPOINT', 'INSECURE', 'CERTIFICATE', 'CLIENT_KEY', 'CLIENT_CERTIFICATE', 'HEADERS', 'COMPRESSION', 'TIMEOUT', 'PROTOCOL'] as const;

function otlpExporter(): Record<string, OtelVariableUse> {
  const out: Record<string, OtelVariableUse> = {};
  for (const key of OTLP_KEYS) {
    const forTraces = key === 'INSECURE' ? GRPC_ONLY : READ;
    out[`OTEL_EXPORTER_OTLP_${key}`] = forTraces;
    out[`OTEL_EXPORTER_OTLP_TRACES_${key}`] = forTraces;
    out[`OTEL_EXPORTER_OTLP_METRICS_${key}`] = OTHER;
    out[`OTEL_EXPORTER_OTLP_LOGS_${key}`] = OTHER;
  }
  return out;
}

export const OTEL_VARIABLES: Readonly<Record<string, OtelVariableUse>> = {
  // General SDK configuration.
  OTEL_SDK_DISABLED: READ,
  OTEL_RESOURCE_ATTRIBUTES: READ,
  OTEL_SERVICE_NAME: READ,
  OTEL_ENTITIES: fixed('entities (in development) are not read; OTEL_RESOURCE_ATTRIBUTES gives the resource'),
  OTEL_LOG_LEVEL: fixed("the SDK's complaints are emr-bridge's own log lines (warn, at most one a minute), under LOG_LEVEL"),
  OTEL_PROPAGATORS: fixed("W3C trace context only: the contract makes a webhook's traceparent its parent, and rows store a traceparent"),
  OTEL_TRACES_SAMPLER: READ,
  OTEL_TRACES_SAMPLER_ARG: READ,
  // Batch span processor.
  OTEL_BSP_SCHEDULE_DELAY: READ,
  OTEL_BSP_EXPORT_TIMEOUT: READ,
  OTEL_BSP_MAX_QUEUE_SIZE: READ,
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: READ,
  // Batch log record processor.
  OTEL_BLRP_SCHEDULE_DELAY: OTHER,
  OTEL_BLRP_EXPORT_TIMEOUT: OTHER,
  OTEL_BLRP_MAX_QUEUE_SIZE: OTHER,
  OTEL_BLRP_MAX_EXPORT_BATCH_SIZE: OTHER,
  // Attribute limits (every signal's, spans' too: the span limits below win).
  OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: READ,
  OTEL_ATTRIBUTE_COUNT_LIMIT: READ,
  // Span limits.
  OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: READ,
  OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: READ,
  OTEL_SPAN_EVENT_COUNT_LIMIT: READ,
  OTEL_SPAN_LINK_COUNT_LIMIT: READ,
  OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT: READ,
  OTEL_LINK_ATTRIBUTE_COUNT_LIMIT: READ,
  // Log record limits.
  OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT: OTHER,
  OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT: OTHER,
  // The OTLP exporter, and its metrics-only options.
  ...otlpExporter(),
  OTEL_EXPORTER_OTLP_SPAN_INSECURE: GRPC_ONLY,
  OTEL_EXPORTER_OTLP_METRIC_INSECURE: OTHER,
  OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: OTHER,
  OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION: OTHER,
  // Specification 1.8 and 1.9; since renamed OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE.
  OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY: OTHER,
  // Other exporters (OTEL_TRACES_EXPORTER takes otlp or none); Jaeger's until specification 1.22.
  OTEL_EXPORTER_ZIPKIN_ENDPOINT: OTHER,
  OTEL_EXPORTER_ZIPKIN_TIMEOUT: OTHER,
  OTEL_EXPORTER_ZIPKIN_PROTOCOL: OTHER,
  OTEL_EXPORTER_PROMETHEUS_HOST: OTHER,
  OTEL_EXPORTER_PROMETHEUS_PORT: OTHER,
  OTEL_EXPORTER_JAEGER_AGENT_HOST: OTHER,
  OTEL_EXPORTER_JAEGER_AGENT_PORT: OTHER,
  OTEL_EXPORTER_JAEGER_ENDPOINT: OTHER,
  OTEL_EXPORTER_JAEGER_TIMEOUT: OTHER,
  OTEL_EXPORTER_JAEGER_USER: OTHER,
  OTEL_EXPORTER_JAEGER_PASSWORD: OTHER,
  OTEL_EXPORTER_JAEGER_PROTOCOL: OTHER,
  // Exporter selection.
  OTEL_TRACES_EXPORTER: READ,
  OTEL_METRICS_EXPORTER: OTHER,
  OTEL_LOGS_EXPORTER: OTHER,
  // Metrics SDK.
  OTEL_METRICS_EXEMPLAR_FILTER: OTHER,
  OTEL_METRIC_EXPORT_INTERVAL: OTHER,
  OTEL_METRIC_EXPORT_TIMEOUT: OTHER,
  // Declarative configuration (OTEL_EXPERIMENTAL_CONFIG_FILE is the deprecated name).
  OTEL_CONFIG_FILE: DECLARATIVE,
  OTEL_EXPERIMENTAL_CONFIG_FILE: DECLARATIVE,
  // Named by the specification's other pages: semantic conventions' opt-in, Go's self-observability.
  OTEL_SEMCONV_STABILITY_OPT_IN: OTHER,
  OTEL_GO_X_OBSERVABILITY: OTHER,
};

/**
 * Families of variables outside the specification's list, accepted whatever follows: the specification's
 * language-specific form OTEL_<LANGUAGE>_<FEATURE> (and its auto-instrumentations'), experimental options,
 * semantic conventions' and instrumentations' switches, and what the Kubernetes operator and injector add.
 */
export const OTEL_PREFIXES: readonly string[] = [
  'OTEL_CPP_',
  'OTEL_DOTNET_',
  'OTEL_ERLANG_',
  'OTEL_ELIXIR_',
  'OTEL_GO_',
  'OTEL_JAVA_',
  'OTEL_JAVAAGENT_',
  'OTEL_JMX_',
  'OTEL_JS_',
  'OTEL_NODE_',
  'OTEL_KOTLIN_',
  'OTEL_PHP_',
  'OTEL_PYTHON_',
  'OTEL_RUBY_',
  'OTEL_RUST_',
  'OTEL_SWIFT_',
  'OTEL_APACHE_',
  'OTEL_NGINX_',
  'OTEL_EXPERIMENTAL_',
  'OTEL_SEMCONV_',
  'OTEL_INSTRUMENTATION_',
  'OTEL_RESOURCE_ATTRIBUTES_',
  'OTEL_INJECTOR_',
];

/** Single variables the Kubernetes operator adds to an instrumented container (OTEL_NODE_IP is OTEL_NODE_'s). */
const OPERATOR_VARIABLES: readonly string[] = ['OTEL_POD_IP'];

/** Every name of the specification's list, for naming the closest one to a typo. */
export const OTEL_VARIABLE_NAMES: readonly string[] = Object.keys(OTEL_VARIABLES);

/** Whether a variable is OpenTelemetry's (of the specification, a language SDK, or the operator), not a typo. */
export function isOpenTelemetryVariable(name: string): boolean {
  return Object.hasOwn(OTEL_VARIABLES, name) || OPERATOR_VARIABLES.includes(name) || OTEL_PREFIXES.some((p) => name.startsWith(p));
}
