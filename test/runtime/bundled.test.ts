// Zero-configuration mode in one process: the adapter runs on the bundled simulator's clock, so moving that
// clock (as QA and the demo do) keeps webhooks verifiable and the whole system in step.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningAdapter } from '../../src/runtime/adapter.ts';
import { adapterFhirReader } from '../support/fhir-client.ts';
import { json } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { startZeroConfigAdapter } from '../support/zero-config-adapter.ts';

let running: Awaited<ReturnType<typeof startZeroConfigAdapter>>;
let adapter: RunningAdapter;
beforeAll(async () => {
  running = await startZeroConfigAdapter();
  adapter = running.adapter;
});
afterAll(async () => running?.close());

describe('zero-configuration mode', () => {
  it('keeps taking webhooks after the simulator clock is moved forward by hours', async () => {
    const sim = adapter.serviceUrl;
    const moved = await json<{ offsetSeconds: number }>('POST', `${sim}/_sim/clock/advance`, { seconds: 2 * 3600 });
    expect(moved.body.offsetSeconds).toBe(7200);
    const created = await json<{ serviceId: string }>('POST', `${sim}/_sim/appointments`, { clinicId: adapter.clinicId });
    const identifier = encodeURIComponent(`urn:emr-bridge:service|${created.body.serviceId}`);
    // Read signed in with the adapter's key, on the moved clock: the EMR's sign-in follows it too.
    const fhir = adapterFhirReader(running.dir, adapter.emrAddress!, { now: () => Date.now() + moved.body.offsetSeconds * 1000 });
    const found = await waitFor(async () => {
      const bundle = await fhir.call<{ entry?: unknown[] }>('GET', `Appointment?identifier=${identifier}`);
      return bundle.body.entry?.length ? bundle.body.entry : undefined;
    });
    await fhir.close();
    expect(found).toHaveLength(1);
    const attempts = (await json<{ statusCode: number | null }[]>('GET', `${sim}/_sim/deliveries`)).body;
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.every((a) => a.statusCode === 200)).toBe(true);
  }, 30_000);
});
