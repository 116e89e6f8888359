// The bundled simulator's clock as seen from another process: a zero-configuration adapter runs on it,
// so what the CLI signs for it (webhooks, EMR sign-in) must carry that time, which QA may have moved.
import { request } from 'undici';
import { systemClock, type Clock } from '../clock.ts';

/** Real time plus the simulator's offset, read once; real time alone when the simulator cannot be asked. */
export async function simulatorClock(serviceUrl: string): Promise<Clock> {
  try {
    const res = await request(`${serviceUrl}/_sim/clock`);
    const { offsetSeconds } = (await res.body.json()) as { offsetSeconds?: number };
    const offsetMs = (offsetSeconds ?? 0) * 1000;
    return { now: () => systemClock.now() + offsetMs };
  } catch {
    return systemClock;
  }
}
