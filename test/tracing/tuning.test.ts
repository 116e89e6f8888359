// The specification's variables that tune the trace pipeline (src/tracing/tuning.ts): read with the settings,
// the traces variant before the general one and the span limits before the attribute ones, emr-bridge's values
// where unset, and a malformed value named at start-up.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { ConfigError } from '../../src/errors.ts';
import { DEFAULT_TRACE_TUNING, type TraceTuning } from '../../src/tracing/tuning.ts';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
const tuning = (env: Record<string, string>): TraceTuning => parseConfig({ ...ENDPOINT, ...env }).tracing!.tuning;

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig({ ...ENDPOINT, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('the batch span processor', () => {
  it("takes emr-bridge's values where nothing is set", () => {
    expect(tuning({})).toEqual(DEFAULT_TRACE_TUNING);
  });

  it('reads OTEL_BSP_*; an export timeout of 0 is none', () => {
    expect(
      tuning({ OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_BSP_EXPORT_TIMEOUT: '0', OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '50' }).batch,
    ).toEqual({ scheduledDelayMillis: 200, exportTimeoutMillis: 2 ** 31 - 1, maxQueueSize: 100, maxExportBatchSize: 50 });
  });

  it('takes the batch size down with a smaller queue set alone, and refuses a batch set above the queue', () => {
    expect(tuning({ OTEL_BSP_MAX_QUEUE_SIZE: '100' }).batch.maxExportBatchSize).toBe(100);
    expect(problems({ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '200' })).toEqual([
      'OTEL_BSP_MAX_EXPORT_BATCH_SIZE: must not be above OTEL_BSP_MAX_QUEUE_SIZE (200 > 100)',
    ]);
  });

  it.each([
    ['OTEL_BSP_SCHEDULE_DELAY', '200ms', 'a whole number of milliseconds, 0 to 2147483647'],
    ['OTEL_BSP_SCHEDULE_DELAY', '-1', 'a whole number of milliseconds, 0 to 2147483647'],
    ['OTEL_BSP_EXPORT_TIMEOUT', '1.5', 'a whole number of milliseconds, 1 to 2147483647, or 0 for no timeout'],
    ['OTEL_BSP_MAX_QUEUE_SIZE', '0', 'a whole number, 1 to 2147483647'],
    ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE', '1e3', 'a whole number, 1 to 2147483647'],
    ['OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', '2147483648', 'a whole number, 0 to 2147483647'],
  ])('refuses %s=%s, saying what it takes', (name, value, expected) => {
    expect(problems({ [name]: value })).toEqual([`${name}: must be ${expected}`]);
  });

  it('checks the values with tracing off too, so a typo shows before the endpoint is set', () => {
    expect(() => parseConfig({ OTEL_BSP_SCHEDULE_DELAY: 'soon' })).toThrow(/OTEL_BSP_SCHEDULE_DELAY: must be a whole number of milliseconds/);
  });
});

describe("the exporter's options", () => {
  it('read the timeout and compression, the traces variant before the general one; a timeout of 0 is none', () => {
    expect(tuning({ OTEL_EXPORTER_OTLP_TIMEOUT: '2500', OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' }).export).toEqual({
      timeoutMillis: 2500,
      compression: 'gzip',
      tls: {},
    });
    const both = tuning({
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '700',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'none',
    });
    expect(both.export).toMatchObject({ timeoutMillis: 700, compression: 'none' });
    expect(tuning({ OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '0' }).export.timeoutMillis).toBe(2 ** 31 - 1);
  });

  it('refuse a compression other than gzip or none, and a timeout that is no whole number, each named', () => {
    expect(problems({ OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '10s' })).toEqual([
      'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: must be a whole number of milliseconds, 1 to 2147483647, or 0 for no timeout',
      'OTEL_EXPORTER_OTLP_COMPRESSION: must be gzip or none',
    ]);
  });

  it("read the TLS files' paths (from the working directory when relative), the traces variant first", () => {
    const tls = tuning({
      OTEL_EXPORTER_OTLP_CERTIFICATE: 'certs/ca.pem',
      OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: '/etc/otel/traces-ca.pem',
      OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: 'certs/client.pem',
      OTEL_EXPORTER_OTLP_CLIENT_KEY: 'certs/client.key',
    }).export.tls;
    expect(tls).toEqual({
      ca: { setting: 'OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE', path: '/etc/otel/traces-ca.pem' },
      cert: { setting: 'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE', path: resolve('certs/client.pem') },
      key: { setting: 'OTEL_EXPORTER_OTLP_CLIENT_KEY', path: resolve('certs/client.key') },
    });
  });

  it('refuse a client key without its certificate, and the reverse, naming the one missing', () => {
    expect(problems({ OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: '/k.pem' })).toEqual([
      'OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: a client certificate and its key go together; set OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE (or its TRACES_ form) too',
    ]);
    expect(problems({ OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: '/c.pem' })[0]).toMatch(/set OTEL_EXPORTER_OTLP_CLIENT_KEY \(or its TRACES_ form\) too$/);
  });
});

describe('the span limits', () => {
  it('fall back to the attribute limits, and the span ones win over them', () => {
    expect(tuning({ OTEL_ATTRIBUTE_COUNT_LIMIT: '10', OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '40' }).spanLimits).toEqual({
      ...DEFAULT_TRACE_TUNING.spanLimits,
      attributeCountLimit: 10,
      attributeValueLengthLimit: 40,
      attributePerEventCountLimit: 10,
      attributePerLinkCountLimit: 10,
    });
    expect(
      tuning({
        OTEL_ATTRIBUTE_COUNT_LIMIT: '10',
        OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '5',
        OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '0',
        OTEL_SPAN_EVENT_COUNT_LIMIT: '3',
        OTEL_SPAN_LINK_COUNT_LIMIT: '2',
        OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT: '4',
        OTEL_LINK_ATTRIBUTE_COUNT_LIMIT: '1',
      }).spanLimits,
    ).toEqual({
      attributeCountLimit: 5,
      attributeValueLengthLimit: 0,
      eventCountLimit: 3,
      linkCountLimit: 2,
      attributePerEventCountLimit: 4,
      attributePerLinkCountLimit: 1,
    });
  });
});
