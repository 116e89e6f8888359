// Simulator benchmark: webhook deliveries per second from the simulator to a fast local receiver (a bare
// node:http server in another process that answers 200), signing included. Target: at least 2,000/s.
import { startChild } from './support/child.ts';
import { silentLogger } from '../src/logger.ts';
import { createSimulator } from '../src/simulator/simulator.ts';
import request from 'supertest';

const EVENTS = 5_000;

export async function benchSimulatorDeliveries(): Promise<{ rows: Record<string, string | number>[]; ok: boolean }> {
  const receiver = await startChild(['bin/run-ts.js', 'bench/support/bare-server.ts']);
  const sim = createSimulator({ logger: silentLogger() });
  try {
    const http = () => request(sim.app.callback());
    const clinicId = (await http().post('/_sim/clinics').send({})).body.clinicId as string;
    await http()
      .post('/_sim/subscriptions')
      .send({ clinicId, url: `${receiver.url}/hook`, eventTypes: ['patient.created'] });
    // Queue every event first, so the measurement is the dispatcher alone.
    for (let i = 0; i < EVENTS; i++)
      sim.emit({
        eventId: crypto.randomUUID(),
        eventType: 'patient.created',
        clinicId,
        patient: { serviceId: `pat_${i}`, externalId: null, name: 'Bench Patient', phone: '+15550000000' },
      } as never);
    const t0 = performance.now();
    await sim.runDue();
    const seconds = (performance.now() - t0) / 1000;
    const delivered = sim.db.prepare("SELECT count(*) FROM deliveries WHERE state = 'delivered'").pluck().get() as number;
    const rate = delivered / seconds;
    return {
      ok: rate >= 2000 && delivered === EVENTS,
      rows: [
        {
          events: EVENTS,
          delivered,
          seconds: seconds.toFixed(2),
          'deliveries/s': Math.round(rate),
          target: '>= 2000/s',
          result: rate >= 2000 ? 'PASS' : 'FAIL',
        },
      ],
    };
  } finally {
    await sim.stop();
    await receiver.stop();
  }
}
