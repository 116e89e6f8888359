// The HL7 v2 module's settings as start-up reads them: HL7_REQUIRE_MAPPED names the records an appointment's SIU
// messages wait for (doctor, location), and anything else stops start-up naming the setting.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config.ts';
import { emrSettings } from '../../../src/emr/settings.ts';

const BASE = { EMR_PROTOCOL: 'hl7v2', HL7_SEND_URL: 'mllp://127.0.0.1:2576', SERVICE_BASE_URL: 'bundled' };
const requireMapped = (value?: string) =>
  emrSettings(parseConfig({ ...BASE, ...(value === undefined ? {} : { HL7_REQUIRE_MAPPED: value }) }).emr, 'hl7v2').requireMapped;

describe('HL7_REQUIRE_MAPPED', () => {
  it('requires nothing by default', () => {
    expect(requireMapped()).toEqual([]);
    expect(requireMapped('')).toEqual([]);
  });

  it('takes doctor, location or both, comma-separated, each once', () => {
    expect(requireMapped('doctor')).toEqual(['doctor']);
    expect(requireMapped(' location , doctor,location ')).toEqual(['location', 'doctor']);
  });

  it('stops start-up naming the setting and the type for anything else (a patient is registered by ADT, never required)', () => {
    expect(() => requireMapped('doctor,patient')).toThrow(/HL7_REQUIRE_MAPPED: must name doctor, location \(comma-separated\), not patient/);
    expect(() => requireMapped('Doctor')).toThrow(/HL7_REQUIRE_MAPPED: .*not Doctor/);
  });
});
