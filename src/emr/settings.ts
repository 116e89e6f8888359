// The settings of every EMR module, for config.ts: each module's schema (merged into the one checked at
// start-up, so a typo in any module's setting is caught whichever EMR is chosen), its address setting for the
// zero-configuration and production rules, and its parser. EMR_PROTOCOL picks the module; only its settings
// are read. Adding a module adds one entry here and one in ./index.ts.
import { FHIR_SETTINGS_SHAPE, type FhirSettings, fhirSettingsFrom } from './fhir/settings.ts';
import { HL7_SETTINGS_SHAPE, type Hl7Settings, hl7SettingsFrom } from './hl7v2/settings.ts';
import type { EmrAddressSetting, EmrCallTimeout, EmrSettingsContext } from './settings-context.ts';

/** The settings of the chosen EMR module, as Config.emr carries them. */
export type EmrConfig = { protocol: 'fhir'; bundled: boolean; settings: FhirSettings } | { protocol: 'hl7v2'; bundled: boolean; settings: Hl7Settings };

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
  hl7v2: {
    address: { name: 'HL7_SEND_URL', what: "the EMR's MLLP address (mllp:// or mllps://)", bundledPart: 'the bundled HL7 EMR' },
    parse: (raw, ctx, problems) => hl7SettingsFrom(raw as Parameters<typeof hl7SettingsFrom>[0], ctx, problems),
    callTimeout: (s) => ({ setting: 'HL7_ACK_TIMEOUT_MS', what: 'one HL7 acknowledgment', ms: s.ackTimeoutMs }),
  },
};

export const EMR_PROTOCOLS = Object.keys(EMR_SETTINGS) as [EmrProtocol, ...EmrProtocol[]];

/** Every module's settings, merged into config.ts's schema. */
export const EMR_SETTINGS_SHAPE = { ...FHIR_SETTINGS_SHAPE, ...HL7_SETTINGS_SHAPE };

type SettingsFor<P extends EmrProtocol> = Extract<EmrConfig, { protocol: P }>['settings'];

/** EMR_PROTOCOL's module reads its own settings from the checked values. */
export function parseEmrConfig(protocol: EmrProtocol, raw: Record<string, unknown>, ctx: EmrSettingsContext, problems: string[]): EmrConfig {
  const entry = EMR_SETTINGS[protocol] as EmrSettingsEntry<EmrProtocol>;
  return { protocol, bundled: ctx.bundled, settings: entry.parse(raw, ctx, problems) } as EmrConfig;
}

/** The longest single call of the chosen module (the processor's lease must outlast two). */
export function emrCallTimeout(emr: EmrConfig): EmrCallTimeout {
  return (EMR_SETTINGS[emr.protocol] as EmrSettingsEntry<EmrProtocol>).callTimeout(emr.settings as never);
}

/** The chosen module's settings, when it is `protocol`'s (a command for one EMR, a test); throws otherwise. */
export function emrSettings<P extends EmrProtocol>(emr: EmrConfig, protocol: P): SettingsFor<P> {
  if (emr.protocol !== protocol) throw new Error(`EMR_PROTOCOL is ${emr.protocol}, not ${protocol}`);
  return emr.settings as SettingsFor<P>;
}
