// What an EMR module's settings parser is told by config.ts: where the data folder is, whether this is
// production, and whether its EMR runs bundled (zero-configuration mode, or its address set to `bundled`).

export interface EmrSettingsContext {
  dataDir: string;
  /** HOST and PORT of the adapter: a module's own listener defaults beside them. */
  host: string;
  adapterPort: number;
  production: boolean;
  /** The module's bundled stand-in runs instead of a real EMR. */
  bundled: boolean;
  isLoopback(url: string): boolean;
}

/** How config.ts names an EMR module's address setting in its deployment rules. */
export interface EmrAddressSetting {
  /** The setting (FHIR_BASE_URL): a real address, or `bundled`. */
  name: string;
  /** What it holds, for "required once SERVICE_BASE_URL is set (…)". */
  what: string;
  /** The bundled stand-in, for "or `bundled` for …". */
  bundledPart: string;
}

/** The longest a single EMR call may take: a processor lease must outlast two of them. */
export interface EmrCallTimeout {
  setting: string;
  what: string;
  ms: number;
}
