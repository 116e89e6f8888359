// The EMR check at start-up (the port's ping; FHIR: GET /metadata): an EMR that answers and is not what
// the adapter needs stops start-up with its reason; one that does not answer yet is an outage, so the
// adapter starts anyway (the receiver must take webhooks) and the check is repeated until it passes. During a
// planned downtime the EMR is not asked: the check waits for the downtime's end.
import { EmrError, type EmrPort } from '../emr/index.ts';
import { toIso } from '../clock.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { EmrDowntime } from '../status/emr-downtime.ts';

/** Start-up refused: the message says what to fix. */
export class EmrStartupError extends Error {
  override name = 'EmrStartupError';
}

export interface EmrWatch {
  stop(): void;
}

const RECHECK_MS = 5_000;

/** `where` names the EMR in a refusal (`the FHIR R4 EMR at https://…`). */
export async function checkEmrAtStart(emr: EmrPort, logger: Logger, where = 'the EMR', downtime?: Pick<EmrDowntime, 'current'>): Promise<EmrWatch> {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  async function attempt(first: boolean): Promise<boolean> {
    const planned = downtime?.current();
    if (planned) {
      if (first) logger.info({ until: toIso(planned.until), reason: planned.reason }, 'EMR in planned downtime: checked once it ends');
      return false;
    }
    try {
      await emr.ping();
      if (!first) logger.info('EMR check passed');
      return true;
    } catch (err) {
      if (first && err instanceof EmrError && err.code === 'emr_incompatible') throw new EmrStartupError(`${where} cannot be used: ${err.message}`);
      if (first) logger.warn({ err: describeError(err) }, 'EMR check failed; starting anyway and checking again');
      return false;
    }
  }
  const recheck = () => {
    timer = setTimeout(() => {
      void attempt(false).then((passed) => {
        if (!passed && !stopped) recheck();
      });
    }, RECHECK_MS);
    timer.unref();
  };
  if (!(await attempt(true))) recheck();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
