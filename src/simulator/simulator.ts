// createSimulator: the bundled service simulator built without listening (tests drive `app` through
// supertest). It owns its SQLite state, its clock (real time plus an offset that only grows, persisted),
// the webhook dispatcher, the document flow and the faults. runDue() fires what is due now; advance()
// moves the clock and fires everything that falls due on the way, each at its own simulated time; the two
// take turns, so the clock never moves while a signed request is on the network.
import type Router from '@koa/router';
import Koa from 'koa';
import { createOffsetClock, type OffsetClock } from '../clock.ts';
import { closeDatabase, openDatabase, type Db } from '../sqlite/open.ts';
import { errorMiddleware } from '../http/error-middleware.ts';
import type { Logger } from '../logger.ts';
import { simulatorOpenApi } from './openapi/index.ts';
import { createOpenApiRouter } from '../openapi/router.ts';
import { SIMULATOR_MIGRATIONS } from '../paths.ts';
import { createControlRouter } from './control-api.ts';
import { createDispatcher, type Dispatcher } from './dispatcher.ts';
import { createDocumentFlow, type DocumentFlow } from './documents.ts';
import { patientCreatedEvent } from './events.ts';
import type { Faults } from './faults.ts';
import { createFileFetcher } from './files.ts';
import { createIntegrationRouter, type IntegrationDeps } from './integration-api.ts';
import { createStore, type Store } from './store.ts';

export interface SimulatorOptions {
  /** SQLite file; ':memory:' (the default) forgets everything on stop. */
  dbPath?: string;
  clock?: OffsetClock;
  logger: Logger;
  /** PEM of a CA that file.url fetches trust besides the system's (tests' self-signed https). */
  trustedCa?: string | Buffer;
  dispatchIntervalMs?: number;
}

export interface Simulator {
  app: Koa;
  db: Db;
  store: Store;
  clock: OffsetClock;
  dispatcher: Dispatcher;
  documents: DocumentFlow;
  emit(event: { eventId: string; eventType: string; clinicId: string }): void;
  runDue(): Promise<void>;
  /** Unpauses a subscription and starts draining its queue in a pass of its own, without waiting for it. */
  resume(subscriptionId: string): void;
  advance(ms: number): Promise<void>;
  getFaults(): Faults;
  setFaults(f: Faults): void;
  /** Calls `listener` after a subscription's signing secrets change (rotated, retired): newest first. */
  onSecretsChanged(listener: SecretsListener): void;
  /** Tells the listeners (the control API calls it). */
  secretsChanged(subscriptionId: string, secrets: readonly string[]): void;
  start(): void;
  stop(): Promise<void>;
}

export type SecretsListener = (subscriptionId: string, secrets: readonly string[]) => void;

export function createSimulator(opts: SimulatorOptions): Simulator {
  const db = openDatabase({ path: opts.dbPath ?? ':memory:', migrationsDir: SIMULATOR_MIGRATIONS });
  const store = createStore(db);
  const clock = opts.clock ?? createOffsetClock(undefined, Number(store.meta('clock_offset_ms') ?? 0));
  const logger = opts.logger;
  const faults = createFaultSwitch();
  const files = createFileFetcher(opts.trustedCa);
  const dispatcher = createDispatcher({ db, store, clock, logger, faults: faults.get });
  const emit = (event: Parameters<Dispatcher['enqueue']>[0]) => dispatcher.enqueue(event);
  const documents = createDocumentFlow({ db, store, clock, faults: faults.get, emit });
  const turns = createTurns();
  const pass = () => firePass(dispatcher, documents);
  const runDue = () => turns.exclusively(pass);
  const secretsListeners: SecretsListener[] = [];
  let timer: NodeJS.Timeout | undefined;

  const sim: Simulator = {
    app: new Koa(),
    db,
    store,
    clock,
    dispatcher,
    documents,
    emit,
    runDue,
    resume(subscriptionId) {
      dispatcher.resume(subscriptionId);
      // However large the backlog, the caller has its answer now; the drain takes its turn like any pass.
      runDue().catch((err: unknown) => logger.error({ err: (err as Error).message, subscriptionId }, 'simulator drain failed'));
    },
    advance: (ms) => turns.exclusively(() => moveClock({ clock, store, dispatcher, documents }, ms, pass)),
    getFaults: faults.get,
    setFaults: faults.set,
    onSecretsChanged: (listener) => void secretsListeners.push(listener),
    secretsChanged(subscriptionId, secrets) {
      for (const listener of secretsListeners) listener(subscriptionId, [...secrets]);
    },
    start() {
      timer = setInterval(() => {
        runDue().catch((err: unknown) => logger.error({ err: (err as Error).message }, 'simulator pass failed'));
      }, opts.dispatchIntervalMs ?? 50);
    },
    async stop() {
      if (timer) clearInterval(timer);
      // What is still on the network is cut off: a receiver holding a request (a pass waits for it up to the
      // receiver's tolerance past its timeout) would otherwise keep the last pass, and so stop, waiting.
      dispatcher.stop();
      await turns.current();
      await files.close();
      await closeDatabase(db);
    },
  };
  const integration = createIntegrationRouter(integrationDeps(sim, files, faults));
  mountRoutes(sim, logger, [integration, createControlRouter(sim, db), createOpenApiRouter(simulatorOpenApi)]);
  return sim;
}

type FaultSwitch = ReturnType<typeof createFaultSwitch>;

/** The faults switched on; an integration error fault answers `count` requests, then switches itself off. */
function createFaultSwitch() {
  let faults: Faults = {};
  return {
    get: (): Faults => faults,
    set(f: Faults): void {
      faults = f;
    },
    consumeIntegrationFault(): void {
      const f = faults.integration;
      if (!f) return;
      if (f.count <= 1) faults = { ...faults, integration: { ...f, status: undefined, count: 0 } };
      else faults = { ...faults, integration: { ...f, count: f.count - 1 } };
    },
  };
}

/**
 * Passes and moves of the clock take turns. An attempt is signed when its pass makes it and is checked by its
 * receiver after; were the clock moved in between, the receiver would see a stale timestamp. A pass ends only
 * once every request it sent is off the network (answered, or its connection gone: past its 10 s too, since a
 * busy receiver may reach it later; see ./delivery-attempt.ts), and which attempts are in flight cannot be read
 * from the queue (a subscription that pauses mid-pass hides its rows), so the clock only ever moves between
 * passes, never during one: an advance answers only after every attempt signed before it is off the network.
 */
function createTurns() {
  let turn: Promise<unknown> = Promise.resolve();
  return {
    exclusively<T>(work: () => Promise<T>): Promise<T> {
      const mine = turn.then(work);
      turn = mine.catch(() => undefined);
      return mine;
    },
    /** The last turn taken, settled either way. */
    current: () => turn,
  };
}

/** Releases the quiet-hours holds that are due and makes every delivery attempt that is due. */
async function firePass(dispatcher: Dispatcher, documents: DocumentFlow): Promise<void> {
  await documents.releaseDue();
  while ((await dispatcher.runDue()) > 0) {
    // Deliveries freed by a success (the next of an appointment) go out in the same pass.
  }
}

/**
 * The clock stands still while what falls due on the way fires, each at its own simulated time, and the
 * offset grows by exactly `ms` however long the firing takes. Runs as one turn: nothing else fires meanwhile.
 */
async function moveClock(
  { clock, store, dispatcher, documents }: Pick<Simulator, 'clock' | 'store' | 'dispatcher' | 'documents'>,
  ms: number,
  pass: () => Promise<void>,
): Promise<void> {
  const nextDue = () => Math.min(dispatcher.nextDueAt() ?? Infinity, documents.nextReleaseAt() ?? Infinity);
  clock.hold();
  try {
    const target = clock.now() + ms;
    for (let next = nextDue(); next <= target; next = nextDue()) {
      if (next > clock.now()) clock.advance(next - clock.now());
      await pass();
      // Still due now: an event that came in during the pass. It goes with the final pass; looping could spin.
      if (nextDue() <= clock.now()) break;
    }
    if (target > clock.now()) clock.advance(target - clock.now());
  } finally {
    clock.release();
  }
  store.setMeta('clock_offset_ms', String(clock.offsetMs()));
  await pass();
}

function integrationDeps(sim: Simulator, files: ReturnType<typeof createFileFetcher>, faults: FaultSwitch): IntegrationDeps {
  return {
    store: sim.store,
    clock: sim.clock,
    documents: sim.documents,
    files,
    faults: faults.get,
    consumeIntegrationFault: faults.consumeIntegrationFault,
    onPatientCreated: (p) => sim.emit(patientCreatedEvent(p, sim.clock.now())),
  };
}

function mountRoutes(sim: Simulator, logger: Logger, routers: Router[]): void {
  sim.app.use(errorMiddleware(logger));
  for (const router of routers) sim.app.use(router.routes()).use(router.allowedMethods());
}
