// `emr-bridge serve` among the OpenTelemetry variables a platform sets for every container: it starts, and
// honours those that tune its traces (OTEL_BSP_SCHEDULE_DELAY=200: a span reaches the collector well within the
// default second); a misspelt one stops it with exit code 2, naming the closest name.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Child, startChild } from '../../bench/support/child.ts';
import { runCli } from '../support/cli.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'emr-bridge-serve-otel-'));
/** Zero configuration, on loopback, whatever the running shell has set. */
const ZERO = { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', SERVICE_BASE_URL: '', FHIR_BASE_URL: '', ADMIN_TOKEN: '', DATABASE_URL: '' };

describe('emr-bridge serve with the standard OpenTelemetry variables', () => {
  let child: Child | undefined;
  let receiver: OtlpReceiver | undefined;
  afterAll(async () => {
    await child?.stop();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts, and sends a span within OTEL_BSP_SCHEDULE_DELAY=200', async () => {
    receiver = await startOtlpReceiver();
    const env = {
      ...ZERO,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_EXPORTER_OTLP_TIMEOUT: '5000',
      OTEL_PROPAGATORS: 'tracecontext,baggage',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      OTEL_RESOURCE_ATTRIBUTES_POD_NAME: 'bridge-0',
    };
    child = await startChild(['bin/emr-bridge.js', 'serve'], { env, timeoutMs: 40_000 });
    // An unsigned webhook is refused (401), and its receipt is a span all the same.
    const res = await fetch(`${child.url}/webhooks/service`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    const answered = performance.now();
    await receiver.waitFor((spans) => spans.some((s) => s.name === 'POST /webhooks/service'), 5_000, 'the webhook span');
    expect(performance.now() - answered).toBeLessThan(900);
  });

  it('stops with exit code 2 at a misspelt one, naming the closest', async () => {
    const { code, out } = await runCli(['serve'], { ...ZERO, OTEL_EXPORTER_OTLP_ENDPOIN: 'http://127.0.0.1:4318' });
    expect(code).toBe(2);
    expect(out).toContain(
      'OTEL_EXPORTER_OTLP_ENDPOIN: neither an OpenTelemetry variable nor a setting of emr-bridge; did you mean OTEL_EXPORTER_OTLP_ENDPOINT?',
    );
  });
});
