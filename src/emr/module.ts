// An EMR module: everything one kind of EMR brings to the adapter, so that the runtime needs nothing else
// from it. Its settings (./settings.ts: schema, address, parser) are checked with the rest before anything
// starts; the module then prepares what those settings point at (a key file), starts its bundled stand-in
// when zero-configuration mode asks for one, and builds its EmrPort with the routes it serves. ./index.ts
// lists the modules; EMR_PROTOCOL picks one.
import type Router from '@koa/router';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { AdaptiveLimit } from '../work/adaptive-limit.ts';
import type { EmrPort } from './port.ts';
import type { EmrConfig, EmrProtocol } from './settings.ts';

export type SettingsOf<P extends EmrProtocol> = Extract<EmrConfig, { protocol: P }>['settings'];

/** Where the adapter runs: a bundled stand-in listens beside it, on the adapter's host. */
export interface EmrHostContext {
  host: string;
  /** The adapter's port; a bundled stand-in takes a fixed offset from it (0: any free port). */
  port: number;
  dataDir: string;
  logger: Logger;
}

/** A bundled stand-in of the EMR, started in zero-configuration mode (or when its address says `bundled`). */
export interface BundledEmr {
  /** Where the port reaches it (FHIR: its base URL). */
  address: string;
  close(): Promise<void>;
}

/** What the banner says of the EMR: its kind, where it is, and how the adapter signs in. */
export interface EmrSummary {
  title: string;
  address: string;
  detail: string;
  /** What the bundled stand-in is called, when one runs (`FHIR server`). */
  standIn?: string;
  /** The bundled stand-in's profile when it is not its default (the FHIR server's `vendor`): bundled.json notes it for the CLI. */
  standInProfile?: string;
  /** The banner's "try it" lines: how a person sees what reached this EMR. */
  tryIt?: string[];
}

export interface RunningEmr {
  port: EmrPort;
  /** Routes on the adapter's public port (FHIR with SMART sign-in: the JWKS). */
  routers: Router[];
  summary: EmrSummary;
  /** The port, then the bundled stand-in. */
  close(): Promise<void>;
}

/** What a module starts with. */
export interface EmrStartContext<P extends EmrProtocol = EmrProtocol> {
  settings: SettingsOf<P>;
  bundled: boolean;
  prepared: unknown;
  host: EmrHostContext;
  clock: Clock;
  metrics: Metrics;
  /**
   * The EMR calls allowed in flight (EMR_MAX_CONCURRENCY, lowered while the EMR pushes back): a module whose
   * calls can run side by side (FHIR over HTTP) makes each within it, and sizes its connections to its max.
   */
  emrCalls: AdaptiveLimit;
}

export interface EmrModule<P extends EmrProtocol = EmrProtocol> {
  protocol: P;
  /**
   * Checks what the settings point at, before anything runs (a key file that cannot be used stops start-up
   * here). Skipped for the part a bundled stand-in provides, which makes its own on start.
   */
  prepare(settings: SettingsOf<P>, bundled: boolean): Promise<unknown>;
  /**
   * Starts the bundled stand-in when `bundled`, then builds the port. `clock` is the one the adapter runs on
   * (the bundled simulator's in zero-configuration mode): a stand-in stamps what it keeps with it.
   */
  start(ctx: EmrStartContext<P>): Promise<RunningEmr>;
}
