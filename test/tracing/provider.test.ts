// The trace SDK built from the standard variables as config.ts read them (src/tracing/provider.ts): each one that
// tunes the pipeline reaches the SDK, seen from the tests' OTLP receiver on loopback: the batch processor's
// delay and batch size, the exporter's timeout, gzip and TLS files, the span limits.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { ConfigError } from '../../src/errors.ts';
import { type Logger, silentLogger } from '../../src/logger.ts';
import { type RunningTracing, startTracing } from '../../src/tracing/provider.ts';
import { inSpan, SPAN_NAMES } from '../../src/tracing/spans.ts';
import { makeTestPki } from '../emr/hl7v2/mllp/support/certs.ts';
import { captureLogger } from '../support/log-capture.ts';
import { type OtlpReceiver, type OtlpReceiverOptions, startOtlpReceiver } from '../support/otlp-receiver.ts';

let running: RunningTracing | undefined;
let receiver: OtlpReceiver | undefined;
const dirs: string[] = [];
afterEach(async () => {
  // The receiver first: an export it holds would otherwise keep shutdown waiting for its timeout.
  await receiver?.close();
  receiver = undefined;
  await running?.shutdown();
  running = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Tracing started from these variables (and the receiver's address as the endpoint), as `serve` starts it. */
async function tracingWith(env: Record<string, string>, opts: OtlpReceiverOptions = {}, logger: Logger = silentLogger()) {
  receiver = await startOtlpReceiver(opts);
  const settings = parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'always_on', ...env }).tracing!;
  running = startTracing(settings, logger);
  return receiver;
}

const aSpan = () => inSpan(SPAN_NAMES.processEvent, { 'emr_bridge.event.id': 'evt-1' }, async () => undefined);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the batch span processor', () => {
  it('sends a span within OTEL_BSP_SCHEDULE_DELAY=200, long before the default second, with no flush', async () => {
    const r = await tracingWith({ OTEL_BSP_SCHEDULE_DELAY: '200' });
    await aSpan();
    const ended = performance.now();
    await r.waitFor((spans) => spans.length === 1, 2_000, 'the span');
    expect(performance.now() - ended).toBeLessThan(900);
  });

  it('holds a span for OTEL_BSP_SCHEDULE_DELAY=60000 until shutdown, and sends a full OTEL_BSP_MAX_EXPORT_BATCH_SIZE at once', async () => {
    const r = await tracingWith({ OTEL_BSP_SCHEDULE_DELAY: '60000', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2' });
    await aSpan();
    await sleep(1_200);
    expect(r.spans).toHaveLength(0);
    await aSpan();
    await r.waitFor((spans) => spans.length === 2, 2_000, 'the full batch');
    await aSpan();
    await running!.shutdown();
    expect(r.spans).toHaveLength(3);
  });

  it("gives up an export after OTEL_BSP_EXPORT_TIMEOUT, before the request's own timeout, and says so", async () => {
    const { logger, lines } = captureLogger('warn');
    // The request's timeout is cut to a second only so that shutdown does not wait out the default 10 s.
    const env = { OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_BSP_EXPORT_TIMEOUT: '200', OTEL_EXPORTER_OTLP_TIMEOUT: '1000' };
    const r = await tracingWith(env, { hold: true }, logger);
    await aSpan();
    const until = Date.now() + 3_000;
    while (!lines().some((l) => l.msg === 'trace export failed') && Date.now() < until) await sleep(25);
    expect(lines().find((l) => l.msg === 'trace export failed')).toMatchObject({ error: 'Timeout' });
    expect(r.held()).toBe(1);
  });
});

describe("the exporter's options", () => {
  it('times a request out after OTEL_EXPORTER_OTLP_TIMEOUT, not the default 10 s', async () => {
    const { logger, lines } = captureLogger('warn');
    const r = await tracingWith({ OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_EXPORTER_OTLP_TIMEOUT: '200' }, { hold: true }, logger);
    await aSpan();
    const until = Date.now() + 3_000;
    while (!lines().some((l) => l.msg === 'trace export failed') && Date.now() < until) await sleep(25);
    expect(lines().find((l) => l.msg === 'trace export failed')).toMatchObject({ error: 'Request timed out' });
    expect(r.held()).toBeGreaterThanOrEqual(1);
  });

  it('compresses with OTEL_EXPORTER_OTLP_COMPRESSION=gzip', async () => {
    const r = await tracingWith({ OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' });
    await aSpan();
    await running!.shutdown();
    expect(r.requests[0]?.headers['content-encoding']).toBe('gzip');
    expect(r.spans.map((s) => s.name)).toEqual(['event process']);
  });

  it('trusts the CA of OTEL_EXPORTER_OTLP_CERTIFICATE and presents the client certificate and key files', async () => {
    const pki = makeTestPki();
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-otlp-tls-'));
    dirs.push(dir);
    const file = (name: string, content: Buffer) => {
      writeFileSync(join(dir, name), content);
      return join(dir, name);
    };
    const r = await tracingWith(
      {
        OTEL_EXPORTER_OTLP_CERTIFICATE: file('ca.pem', pki.ca),
        OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE: file('client.pem', pki.client.cert),
        OTEL_EXPORTER_OTLP_CLIENT_KEY: file('client.key', pki.client.key),
      },
      { tls: { ...pki.server, ca: pki.ca } },
    );
    expect(r.url).toMatch(/^https:/);
    await aSpan();
    await running!.shutdown();
    expect(r.spans.map((s) => s.name)).toEqual(['event process']);
  });

  it('stops start-up naming a TLS file that cannot be read, with nothing registered', () => {
    const settings = parseConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: '/nonexistent/otel-ca.pem',
    }).tracing!;
    expect(() => startTracing(settings, silentLogger())).toThrow(ConfigError);
    expect(() => startTracing(settings, silentLogger())).toThrow(/OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: cannot read \/nonexistent\/otel-ca\.pem \(ENOENT\)/);
  });
});

describe('the span limits', () => {
  it('cut attributes to OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT and their values to OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT', async () => {
    const r = await tracingWith({ OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '1', OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '3' });
    await inSpan(SPAN_NAMES.processEvent, { 'emr_bridge.event.id': 'evt-12345', 'emr_bridge.event.type': 'appointment.created' }, async () => undefined);
    await running!.shutdown();
    expect(r.spans[0]?.attributes).toEqual({ 'emr_bridge.event.id': 'evt' });
  });
});
