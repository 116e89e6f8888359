// A simulator driven through supertest with a clock that tests move, plus a clinic, a key and a
// subscriber set up the way a test needs them.
import request from 'supertest';
import { createManualClock, createOffsetClock } from '../../src/clock.ts';
import { silentLogger } from '../../src/logger.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';
import { startSubscriber } from './subscriber.ts';

export const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

export async function simulatorFixture(
  opts: { start?: string; clinic?: Record<string, unknown>; eventTypes?: string[]; trustedCa?: string; realTimePasses?: boolean } = {},
) {
  const manual = createManualClock(Date.parse(opts.start ?? '2026-01-15T12:00:00.000Z'));
  // realTimePasses: every reading is a millisecond later than the one before, as real time would be.
  const base = opts.realTimePasses
    ? {
        now: () => {
          manual.advance(1);
          return manual.now();
        },
      }
    : manual;
  const clock = createOffsetClock(base);
  const sim: Simulator = createSimulator({ clock, logger: silentLogger(), ...(opts.trustedCa ? { trustedCa: opts.trustedCa } : {}) });
  const http = () => request(sim.app.callback());
  const subscriber = await startSubscriber();
  const clinic = (
    await http()
      .post('/_sim/clinics')
      .send(opts.clinic ?? {})
  ).body as { clinicId: string };
  const key = (await http().post('/_sim/keys').send({ clinicId: clinic.clinicId })).body.key as string;
  const sub = (
    await http()
      .post('/_sim/subscriptions')
      .send({ clinicId: clinic.clinicId, url: subscriber.url, ...(opts.eventTypes ? { eventTypes: opts.eventTypes } : {}) })
  ).body as { id: string; keyId: string; signingSecret: string };
  return {
    sim,
    http,
    clock,
    subscriber,
    clinicId: clinic.clinicId,
    key,
    sub,
    api: (method: 'get' | 'post' | 'put', path: string, k = key) => http()[method](`/integration/v1/${path}`).set('authorization', `Bearer ${k}`),
    labReport: (overrides: Record<string, unknown> = {}) => ({
      externalId: `lab-${Math.random().toString(36).slice(2)}`,
      patientPhone: '+15550001111',
      patientName: 'Synthetic Patient',
      label: 'Blood count',
      file: { base64: PDF.toString('base64'), filename: 'blood.pdf' },
      ...overrides,
    }),
    async close() {
      await sim.stop();
      await subscriber.close();
    },
  };
}
