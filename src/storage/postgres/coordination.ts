// Coordination between replicas on one PostgreSQL database (../coordination.ts):
// - exclusive(name, job): a session advisory lock, tried (pg_try_advisory_lock) on a connection kept for the
//   job's whole run; another replica holding it means the job is skipped here. The lock ends with the job, or
//   with the connection when the replica dies (the server frees a dead session's locks).
// - notify / onWork: NOTIFY on one channel, the topic as payload; one dedicated connection per replica
//   LISTENs, and reconnects when it is lost. After a reconnection every listener is called once, since a
//   notification sent meanwhile was missed (a wake-up too many costs one empty pass; one too few, a poll).
// Notifications sent inside a transaction are delivered at its commit, and only if it commits: a store that
// writes work may notify in the same transaction (see WORK_CHANNEL).
import pg from 'pg';
import type { Logger } from '../../logger.ts';
import type { Coordination, WorkTopic } from '../coordination.ts';
import type { Pool } from './pool.ts';

/** The NOTIFY channel of work topics; the payload is the topic ('events', 'documents'). */
export const WORK_CHANNEL = 'emr_bridge_work';

/** The advisory-lock key of an exclusive job (a bigint PostgreSQL hashes from the name). */
const EXCLUSIVE_KEY = "hashtextextended('emr-bridge:exclusive:' || $1, 0)";

const TOPICS: readonly WorkTopic[] = ['events', 'documents'];

export interface PostgresCoordinationOptions {
  pool: Pool;
  /** The database's URL: the listening connection is one of its own, outside the pool. */
  url: string;
  logger?: Logger;
  /** First wait before reconnecting the listener (doubles up to 30 s; default 500 ms). */
  reconnectMs?: number;
}

export function createPostgresCoordination(opts: PostgresCoordinationOptions): Coordination {
  const { pool } = opts;
  const listeners = new Map<WorkTopic, Set<() => void>>(TOPICS.map((t) => [t, new Set()]));
  const listener = createListener(opts, (topic) => {
    for (const l of [...(listeners.get(topic) ?? [])]) l();
  });

  return {
    async exclusive(name, job) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        const { rows } = await client.query<{ held: boolean }>(`SELECT pg_try_advisory_lock(${EXCLUSIVE_KEY}) AS held`, [name]);
        if (!rows[0]!.held) return undefined;
        try {
          return await job();
        } finally {
          await client.query(`SELECT pg_advisory_unlock(${EXCLUSIVE_KEY})`, [name]).catch((err: Error) => {
            // The connection is gone, and the server freed the lock with it.
            broken = err;
          });
        }
      } finally {
        client.release(broken);
      }
    },
    notify(topic) {
      pool.query('SELECT pg_notify($1, $2)', [WORK_CHANNEL, topic]).catch((err: Error) => {
        // The work is stored; the other replicas find it at their next poll.
        opts.logger?.warn({ code: (err as { code?: string }).code, topic }, 'work notification not sent');
      });
    },
    onWork(topic, l) {
      listeners.get(topic)!.add(l);
      listener.start();
      return () => void listeners.get(topic)!.delete(l);
    },
    close: () => listener.stop(),
  };
}

interface Listener {
  /** Connects (once); later calls do nothing. */
  start(): void;
  stop(): Promise<void>;
}

/** The one LISTEN connection of a replica, reconnected with a doubling pause while it cannot be made. */
function createListener(opts: PostgresCoordinationOptions, deliver: (topic: WorkTopic) => void): Listener {
  const firstPause = opts.reconnectMs ?? 500;
  let pause = firstPause;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let started = false;
  let stopped = false;

  async function connect(): Promise<void> {
    timer = undefined;
    if (stopped) return;
    const c = new pg.Client({ connectionString: opts.url, keepAlive: true, application_name: 'emr-bridge listen' });
    client = c;
    c.on('notification', (n) => {
      if (n.channel === WORK_CHANNEL && TOPICS.includes(n.payload as WorkTopic)) deliver(n.payload as WorkTopic);
    });
    c.on('error', () => lost(c));
    c.on('end', () => lost(c));
    try {
      await c.connect();
      await c.query(`LISTEN ${WORK_CHANNEL}`);
    } catch (err) {
      opts.logger?.warn({ code: (err as { code?: string }).code }, 'work notifications: cannot listen; retrying');
      lost(c);
      return;
    }
    if (stopped) {
      await c.end().catch(() => undefined);
      return;
    }
    const reconnected = pause !== firstPause;
    pause = firstPause;
    // Whatever was notified while no connection listened is found by this wake-up.
    if (reconnected) for (const t of TOPICS) deliver(t);
  }

  function lost(c: pg.Client): void {
    if (client !== c) return;
    client = undefined;
    c.end().catch(() => undefined);
    if (stopped || timer) return;
    timer = setTimeout(() => void connect(), pause);
    timer.unref();
    pause = Math.min(pause * 2, 30_000);
  }

  return {
    start() {
      if (started || stopped) return;
      started = true;
      void connect();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
