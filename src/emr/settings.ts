// The settings of every EMR module, for config.ts: each module's schema (merged into the one checked at
// start-up, so a typo in any module's setting is caught whichever EMR is chosen), its address setting for the
// zero-configuration and production rules, and its parser. EMR_PROTOCOL picks the module; only its settings
// are read. Adding a module adds one entry here and one in ./index.ts.
import { FHIR_SETTINGS_SHAPE, type FhirSettings, fhirSettingsFrom } from './fhir/settings.ts';
import type { EmrAddressSetting, EmrCallTimeout, EmrSettingsContext } from './settings-context.ts';

/** The settings of the chosen EMR module, as Config.emr carries them. */
export type EmrConfig = { protocol: 'fhir'; bundled: boolean; settings: FhirSettings };

export type EmrProtocol = EmrConfig['protocol'];

interface EmrSettingsEntry<P extends EmrProtocol> {
  address: EmrAddressSetting;
  parse(raw: Record<string, unknown>, ctx: EmrSettingsContext, problems: string[]): Extract<EmrConfig, { protocol: P }>['settings'];
  callTimeout(settings: Extract<EmrConfig, { protocol: P }>['settings']): EmrCallTimeout;
}

export const EMR_SETTINGS: { [P in EmrProtocol]: EmrSettingsEntry<P> } = {
  fhir: {
    address: { name: 'FHIR_BASE_URL', what: "the EMR's FHIR base URL", bundledPart: 'the bundled FHIR server' },
    parse: (raw, ctx, problems) => fhirSettingsFrom(raw as Parameters<typeof fhirSettingsFrom>[0], ctx, problems),
    callTimeout: (s) => ({ setting: 'FHIR_TIMEOUT_MS', what: 'one FHIR call', ms: s.timeoutMs }),
  },
};

export const EMR_PROTOCOLS = Object.keys(EMR_SETTINGS) as [EmrProtocol, ...EmrProtocol[]];

/** Every module's settings, merged into config.ts's schema. */
export const EMR_SETTINGS_SHAPE = { ...FHIR_SETTINGS_SHAPE };
