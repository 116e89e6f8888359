// The FHIR R4 EMR module: its settings are FHIR_* (./settings.ts); it signs in as FHIR_AUTH says, serves its
// public JWKS when that is SMART, and in zero-configuration mode starts the bundled FHIR server in the profile
// FHIR_SERVER_PROFILE names (with the adapter's key registered, so the adapter signs in there as it would at a
// hospital).
import { join } from 'node:path';
import type { Clock } from '../../clock.ts';
import { startFhirServer } from '../../fhir-server/server.ts';
import type { BundledEmr, EmrHostContext, EmrModule } from '../module.ts';
import { type FhirAuthSettings, loadFhirAuthSettings } from './auth/index.ts';
import { createJwksRouter } from './auth/jwks-router.ts';
import { ensureClientKey, jwksOf, loadClientKey } from './auth/keys.ts';
import { createFhirEmr } from './index.ts';
import type { FhirSettings, ServerProfile } from './settings.ts';

/** The bundled FHIR server listens two ports above the adapter (the simulator takes the one between). */
const BUNDLED_PORT_OFFSET = 2;

/**
 * Where the bundled FHIR server keeps its records: each profile its own file, so that an EMR that owns its records
 * never starts with what the adapter created in the other (and a switch back finds its own as it left them).
 */
const dataFileOf = (profile: ServerProfile) => (profile === 'vendor' ? 'fhir-vendor.jsonl' : 'fhir.jsonl');

const SEE_IT_ARRIVE =
  "see it arrive in FHIR: sleep 1; npx emr-bridge fhir-get 'Appointment?_count=10'   (the FHIR server wants a SMART sign-in, as a hospital's does)";

/** The banner's try-it lines: beside the vendor profile the appointment first waits for its doctor and location. */
function tryItLines(profile: ServerProfile, bundled: boolean): string[] {
  if (!bundled || profile !== 'vendor') return [SEE_IT_ARRIVE];
  return [
    "it waits for its doctor and location, which this EMR keeps itself: map them on the console's Needs mapping page, or all at once:",
    "npx emr-bridge crosswalk import samples/crosswalk.csv   (then it is booked into the doctor's Slot)",
    SEE_IT_ARRIVE,
  ];
}

/**
 * The bundled FHIR server. With FHIR_AUTH=smart (the default here) it requires SMART Backend Services, and
 * the adapter's key (made in the data folder on the first start) is registered with it: the adapter signs
 * in as it would at a hospital, and a wrong key fails here as it would there.
 */
async function startBundledFhir(settings: FhirSettings, host: EmrHostContext, clock: Clock): Promise<BundledEmr> {
  const auth = settings.auth;
  const fhir = await startFhirServer({
    // On the adapter's clock (the simulator's): moving it must not make the adapter's assertions look stale.
    clock,
    port: host.port === 0 ? 0 : host.port + BUNDLED_PORT_OFFSET,
    // HOST, as the adapter: in a container (0.0.0.0) the demo's FHIR server is reachable from outside. The
    // adapter still reaches it on the advertised loopback address.
    host: host.host,
    dataFile: join(host.dataDir, dataFileOf(settings.serverProfile)),
    logger: host.logger.child({ component: 'fhir-server' }),
    profile: settings.serverProfile,
    ...(auth.mode === 'smart' ? { auth: {} } : {}),
  });
  if (auth.mode === 'smart') {
    // Registered under the kid the adapter signs with (FHIR_KEY_ID, else the thumbprint).
    await ensureClientKey(auth.privateKeyPath);
    const key = await loadClientKey(auth.privateKeyPath, auth.keyId);
    fhir.auth!.registerClient({ clientId: auth.clientId, jwks: jwksOf(key.publicJwk) });
  }
  return { address: fhir.baseUrl, close: () => fhir.close() };
}

export const fhirModule: EmrModule<'fhir'> = {
  protocol: 'fhir',
  // A key that cannot be used stops start-up before anything runs; the bundled server's key is made on its start.
  prepare: async (settings, bundled) => (bundled ? undefined : loadFhirAuthSettings(settings.auth)),
  async start({ settings, bundled, prepared, host, clock, metrics, emrCalls }) {
    const stand = bundled ? await startBundledFhir(settings, host, clock) : undefined;
    try {
      const auth = (prepared as FhirAuthSettings | undefined) ?? (await loadFhirAuthSettings(settings.auth));
      const baseUrl = settings.baseUrl ?? stand!.address;
      const vendor = bundled && settings.serverProfile === 'vendor';
      const port = createFhirEmr({
        baseUrl,
        identifierSystem: settings.identifierSystem,
        timeoutMs: settings.timeoutMs,
        labReportTypeCodes: settings.labReportTypeCodes,
        prescriptionTypeCodes: settings.prescriptionTypeCodes,
        auth,
        maxContentBytes: settings.maxContentBytes,
        ...(settings.creates ? { creates: settings.creates } : {}),
        booking: settings.booking,
        clock,
        logger: host.logger.child({ component: 'emr' }),
        metrics,
        limit: emrCalls,
      });
      return {
        port,
        routers: auth.mode === 'smart' ? [createJwksRouter(auth.key.publicJwk)] : [],
        summary: {
          title: 'FHIR R4 EMR',
          address: baseUrl,
          detail: `${bundled ? `bundled FHIR server${vendor ? ', vendor profile' : ''}` : 'real'}, sign-in: ${auth.mode}${settings.booking === 'slot' ? ', booking into Slots' : ''}`,
          ...(bundled ? { standIn: 'FHIR server' } : {}),
          ...(bundled && vendor ? { standInProfile: 'vendor' } : {}),
          tryIt: tryItLines(settings.serverProfile, bundled),
        },
        async close() {
          await port.close();
          await stand?.close();
        },
      };
    } catch (err) {
      await stand?.close();
      throw err;
    }
  },
};
