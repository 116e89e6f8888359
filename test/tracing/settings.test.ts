// The OTEL_* settings: read by config.ts alone, checked with the rest, off without an endpoint.
import { describe, expect, it } from 'vitest';
import { loadConfigFrom, parseConfig } from '../../src/config.ts';
import { ConfigError } from '../../src/errors.ts';
import { DEFAULT_TRACE_TUNING } from '../../src/tracing/tuning.ts';

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const PRODUCTION = {
  NODE_ENV: 'production',
  SERVICE_BASE_URL: 'https://service.example.test',
  SERVICE_API_KEY: 'k',
  SERVICE_KEY_ID: 'kid',
  SERVICE_SIGNING_SECRETS: 's',
  FHIR_BASE_URL: 'https://emr.example.test/fhir',
  ADMIN_TOKEN: 'admin-token-0123456789',
  DATA_ENCRYPTION: 'off',
};

describe('the trace settings', () => {
  it('are off with no endpoint, whatever else is set', () => {
    expect(parseConfig({}).tracing).toBeUndefined();
    expect(parseConfig({ OTEL_SERVICE_NAME: 'bridge-a', OTEL_TRACES_SAMPLER: 'always_on' }).tracing).toBeUndefined();
  });

  it('post to the base endpoint with /v1/traces, or to the traces endpoint as it is, protobuf by default', () => {
    expect(parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      serviceName: 'emr-bridge',
      resourceAttributes: {},
      sampler: { name: 'parentbased_always_on', ratio: 1 },
      tuning: DEFAULT_TRACE_TUNING,
    });
    expect(parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp/' }).tracing?.url).toBe('http://collector:4318/otlp/v1/traces');
    expect(
      parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.test/api/spans' }).tracing
        ?.url,
    ).toBe('https://traces.example.test/api/spans');
  });

  it('read the protocol (the traces one wins) and refuse gRPC, saying what to use', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' };
    expect(parseConfig({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing?.protocol).toBe('http/json');
    expect(parseConfig({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).tracing?.protocol).toBe(
      'http/protobuf',
    );
    expect(problems({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).join('\n')).toMatch(
      /OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not supported: use http\/protobuf/,
    );
    expect(problems({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'thrift' }).join('\n')).toMatch(
      /OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf or http\/json/,
    );
  });

  it('read headers (the traces ones win, values percent-decoded) and name a bad entry without repeating any value', () => {
    const t = parseConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=abc%20def, authorization=Basic%20one',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'authorization=Basic%20two',
    }).tracing;
    expect(t?.headers).toEqual({ 'x-team': 'abc def', authorization: 'Basic two' });
    const p = problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318', OTEL_EXPORTER_OTLP_HEADERS: 'x-ok=1,secret-without-equals-sign-s3cr3t' });
    expect(p).toEqual(['OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value']);
    expect(problems({ OTEL_EXPORTER_OTLP_HEADERS: 'x-key=%E0%A4%A' })).toEqual(['OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not percent-encoded correctly']);
  });

  it('read the headers from a file named by _FILE, as the other secrets', () => {
    const files: Record<string, string> = { '/run/secrets/otlp': 'x-honeycomb-team=k3y\n' };
    const config = loadConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://api.honeycomb.io', OTEL_EXPORTER_OTLP_HEADERS_FILE: '/run/secrets/otlp' }, (path) => {
      if (!(path in files)) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
      return files[path]!;
    });
    expect(config.tracing?.headers).toEqual({ 'x-honeycomb-team': 'k3y' });
  });

  it('name the service emr-bridge unless OTEL_SERVICE_NAME (or a service.name resource attribute) says otherwise', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' };
    expect(parseConfig({ ...base, OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes,service.namespace=hospital-a' }).tracing).toMatchObject({
      serviceName: 'from-attributes',
      resourceAttributes: { 'service.namespace': 'hospital-a' },
    });
    expect(parseConfig({ ...base, OTEL_SERVICE_NAME: 'bridge-a', OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes' }).tracing?.serviceName).toBe(
      'bridge-a',
    );
  });

  it('read the six standard samplers, the ratio only for the ratio ones (the others ignore it), between 0 and 1', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' };
    expect(parseConfig({ ...base, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).tracing?.sampler).toEqual({
      name: 'parentbased_traceidratio',
      ratio: 0.25,
    });
    expect(parseConfig({ ...base, OTEL_TRACES_SAMPLER: 'always_on' }).tracing?.sampler).toEqual({ name: 'always_on', ratio: 1 });
    expect(problems({ ...base, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' })).toEqual([
      'OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1 (the share of traces sampled)',
    ]);
    expect(parseConfig({ ...base, OTEL_TRACES_SAMPLER: 'always_on', OTEL_TRACES_SAMPLER_ARG: '0.5' }).tracing?.sampler).toEqual({
      name: 'always_on',
      ratio: 1,
    });
    expect(parseConfig({ ...base, OTEL_TRACES_SAMPLER_ARG: '0.5' }).tracing?.sampler).toEqual({ name: 'parentbased_always_on', ratio: 1 });
    expect(problems({ ...base, OTEL_TRACES_SAMPLER: 'jaeger_remote' })[0]).toMatch(/^OTEL_TRACES_SAMPLER: must be one of always_on, always_off, traceidratio/);
  });

  it('are off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, an endpoint set or not', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' };
    expect(parseConfig({ ...base, OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
    expect(parseConfig({ ...base, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
    expect(parseConfig({ ...base, OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }).tracing).toBeDefined();
    expect(problems({ ...base, OTEL_TRACES_EXPORTER: 'jaeger' })[0]).toMatch(/^OTEL_TRACES_EXPORTER: must be otlp or none/);
  });

  it('refuse an endpoint that is not an http(s) URL or carries a password, and plain http in production unless loopback', () => {
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })[0]).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT: (not a URL|must be http)/);
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' })).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT: must be http:// or https:// (OTLP over HTTP), not grpc://',
    ]);
    const withPassword = problems({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://user:hunter2@collector.example.test/v1/traces' });
    expect(withPassword).toEqual(['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must not carry a user or password; put the credential in OTEL_EXPORTER_OTLP_HEADERS']);
    expect(withPassword.join()).not.toContain('hunter2');
    expect(problems({ ...PRODUCTION, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example.test:4318' })).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT: must be https with NODE_ENV=production (loopback excepted: a collector beside the adapter)',
    ]);
    expect(parseConfig({ ...PRODUCTION, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracing?.url).toBe('http://127.0.0.1:4318/v1/traces');
  });

  it("stops at a misspelt OTEL_ name, naming the closest, and leaves the specification's and other SDKs' variables alone", () => {
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPIONT: 'http://localhost:4318' })).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPIONT: neither an OpenTelemetry variable nor a setting of emr-bridge; did you mean OTEL_EXPORTER_OTLP_ENDPOINT?',
    ]);
    expect(
      problems({
        OTEL_BSP_SCHEDULE_DELAY: '500',
        OTEL_METRICS_EXPORTER: 'none',
        OTEL_LOGS_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://x:4318/v1/metrics',
        OTEL_PROPAGATORS: 'tracecontext,baggage',
        OTEL_RESOURCE_ATTRIBUTES_POD_NAME: 'bridge-0',
        OTEL_NODE_RESOURCE_DETECTORS: 'env',
      }),
    ).toEqual([]);
  });
});
