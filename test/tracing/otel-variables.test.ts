// The OpenTelemetry specification's variables (src/tracing/otel-variables.ts): each starts emr-bridge, alone and
// all together; those that shape traces are read, the others accepted and ignored, whatever their value; an
// OTEL_ name in no specification stops start-up, naming the closest name of either kind.
import { describe, expect, it } from 'vitest';
import { parseConfig, SETTING_NAMES } from '../../src/config.ts';
import { ConfigError } from '../../src/errors.ts';
import { isOpenTelemetryVariable, OTEL_VARIABLE_NAMES, OTEL_VARIABLES } from '../../src/tracing/otel-variables.ts';
import { TRACE_TUNING_VARIABLES } from '../../src/tracing/tuning.ts';

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

/** A right value for each variable emr-bridge reads (by the end of its name); the ignored ones get any text. */
const VALUE_BY_ENDING: [RegExp, string][] = [
  [/_ENDPOINT$/, 'http://127.0.0.1:4318'],
  [/_PROTOCOL$/, 'http/protobuf'],
  [/_HEADERS$/, 'x-team=key%201'],
  [/_COMPRESSION$/, 'gzip'],
  [/_TIMEOUT$|_DELAY$|_SIZE$|_LIMIT$/, '200'],
  [/_(CERTIFICATE|CLIENT_KEY)$/, '/etc/otel/tls/file.pem'],
  [/^OTEL_SDK_DISABLED$/, 'false'],
  [/^OTEL_RESOURCE_ATTRIBUTES$/, 'deployment.environment.name=test'],
  [/^OTEL_SERVICE_NAME$/, 'bridge-a'],
  [/^OTEL_TRACES_SAMPLER$/, 'parentbased_traceidratio'],
  [/^OTEL_TRACES_SAMPLER_ARG$/, '0.5'],
  [/^OTEL_TRACES_EXPORTER$/, 'otlp'],
];
const sampleOf = (name: string) => VALUE_BY_ENDING.find(([ending]) => ending.test(name))?.[1] ?? 'any value: not read';

/** A client certificate goes with its key: each is given its partner. */
const partners = (name: string): Record<string, string> => {
  const partner = name.endsWith('_CLIENT_KEY') ? name.replace(/_CLIENT_KEY$/, '_CLIENT_CERTIFICATE') : name.replace(/_CLIENT_CERTIFICATE$/, '_CLIENT_KEY');
  return partner === name || !(OTEL_VARIABLES[name] as { read?: boolean }).read ? {} : { [partner]: sampleOf(partner) };
};

const read = OTEL_VARIABLE_NAMES.filter((n) => (OTEL_VARIABLES[n] as { read?: boolean }).read === true);

describe("the specification's variables", () => {
  it.each(OTEL_VARIABLE_NAMES)('%s starts emr-bridge', (name) => {
    expect(problems({ [name]: sampleOf(name), ...partners(name) })).toEqual([]);
  });

  it('start emr-bridge all at once, tracing on', () => {
    const env = Object.fromEntries(OTEL_VARIABLE_NAMES.map((n) => [n, sampleOf(n)]));
    const tracing = parseConfig(env).tracing;
    expect(tracing?.url).toBe('http://127.0.0.1:4318/');
    expect(tracing?.tuning.batch.scheduledDelayMillis).toBe(200);
    expect(tracing?.tuning.export).toMatchObject({ timeoutMillis: 200, compression: 'gzip' });
  });

  it('are listed the way the specification spells them, and include the deprecated and per-signal ones', () => {
    for (const name of OTEL_VARIABLE_NAMES) expect(name).toMatch(/^OTEL_[A-Z0-9]+(_[A-Z0-9]+)*$/);
    for (const signal of ['', 'TRACES_', 'METRICS_', 'LOGS_'])
      for (const key of ['ENDPOINT', 'INSECURE', 'CERTIFICATE', 'CLIENT_KEY', 'CLIENT_CERTIFICATE', 'HEADERS', 'COMPRESSION', 'TIMEOUT', 'PROTOCOL'])
        expect(OTEL_VARIABLE_NAMES).toContain(`OTEL_EXPORTER_OTLP_${signal}${key}`);
    expect(OTEL_VARIABLE_NAMES).toEqual(
      expect.arrayContaining([
        'OTEL_EXPORTER_JAEGER_AGENT_HOST',
        'OTEL_EXPORTER_OTLP_SPAN_INSECURE',
        'OTEL_EXPERIMENTAL_CONFIG_FILE',
        'OTEL_BLRP_SCHEDULE_DELAY',
      ]),
    );
  });

  it('that shape traces are read, each one; every OTEL_ setting emr-bridge reads is one of them', () => {
    const readByBridge = [...SETTING_NAMES.filter((n) => n.startsWith('OTEL_') && !n.endsWith('_FILE')), ...TRACE_TUNING_VARIABLES];
    expect([...read].sort()).toEqual([...new Set(readByBridge)].sort());
    const notRead = OTEL_VARIABLE_NAMES.filter((n) => OTEL_VARIABLES[n]!.traces && !(OTEL_VARIABLES[n] as { read?: boolean }).read);
    expect(notRead.sort()).toEqual(
      [
        'OTEL_CONFIG_FILE',
        'OTEL_ENTITIES',
        'OTEL_EXPERIMENTAL_CONFIG_FILE',
        'OTEL_EXPORTER_OTLP_INSECURE',
        'OTEL_EXPORTER_OTLP_SPAN_INSECURE',
        'OTEL_EXPORTER_OTLP_TRACES_INSECURE',
        'OTEL_LOG_LEVEL',
        'OTEL_PROPAGATORS',
      ].sort(),
    );
  });

  it('that emr-bridge ignores are not checked, whatever their value', () => {
    expect(
      problems({ OTEL_PROPAGATORS: 'b3multi,xray', OTEL_METRICS_EXPORTER: 'prometheus', OTEL_LOG_LEVEL: 'chatty', OTEL_EXPORTER_OTLP_INSECURE: 'yes' }),
    ).toEqual([]);
  });
});

describe('other OpenTelemetry variables', () => {
  it("language SDKs', instrumentations' and the Kubernetes operator's start emr-bridge", () => {
    const env = {
      OTEL_NODE_RESOURCE_DETECTORS: 'env,host',
      OTEL_NODE_IP: '10.0.0.7',
      OTEL_POD_IP: '10.1.2.3',
      OTEL_RESOURCE_ATTRIBUTES_POD_NAME: 'bridge-0',
      OTEL_RESOURCE_ATTRIBUTES_NODE_NAME: 'node-a',
      OTEL_PYTHON_LOG_CORRELATION: 'true',
      OTEL_JAVAAGENT_ENABLED: 'false',
      OTEL_DOTNET_AUTO_HOME: '/otel-auto-instrumentation-dotnet',
      OTEL_GO_AUTO_TARGET_EXE: '/app/main',
      OTEL_PHP_AUTOLOAD_ENABLED: 'true',
      OTEL_SEMCONV_STABILITY_OPT_IN: 'http',
      OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS: 'GET,POST',
      OTEL_EXPERIMENTAL_RESOURCE_DETECTORS: 'all',
    };
    expect(problems(env)).toEqual([]);
    for (const name of Object.keys(env)) expect(isOpenTelemetryVariable(name), name).toBe(true);
  });
});

describe('a name in no specification', () => {
  it.each([
    ['OTEL_EXPORTER_OTLP_ENDPOIN', 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    ['OTEL_BSP_SCHEDULE_DELAI', 'OTEL_BSP_SCHEDULE_DELAY'],
    ['OTEL_METRICS_EXPORTR', 'OTEL_METRICS_EXPORTER'],
    ['OTEL_TRACE_SAMPLER', 'OTEL_TRACES_SAMPLER'],
    ['OTEL_EXPORTER_OTLP_TRACE_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    ['OTEL_SERVICENAME', 'OTEL_SERVICE_NAME'],
  ])('%s stops start-up, naming %s', (typo, closest) => {
    expect(problems({ [typo]: '1' })).toEqual([`${typo}: neither an OpenTelemetry variable nor a setting of emr-bridge; did you mean ${closest}?`]);
  });

  it('of emr-bridge still names the closest setting', () => {
    expect(problems({ FHIR_BASEURL: 'https://emr.example.test/fhir' })).toContain('FHIR_BASEURL: not a setting of emr-bridge; did you mean FHIR_BASE_URL?');
  });
});
