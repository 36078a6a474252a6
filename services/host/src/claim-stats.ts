import { type PollLoop, pollLoop } from '@demiurge/event-store';
import type { Logger } from './logger.js';

/**
 * Reports the host's durable-work claims at `info` (`serve --log-json` shows them), every `everyMs` when they
 * changed: items claimed, and claim races lost to other claimers (several hosts on one database try the same
 * due item; one commits its claim, the others skip it).
 */
export function reportClaimStats(
  stats: { readonly claimed: number; readonly racesLost: number },
  logger: Logger,
  everyMs = 1_000,
): PollLoop {
  let last = '';
  return pollLoop({
    intervalMs: everyMs,
    firstDelayMs: everyMs,
    onError: (error) => logger.error(`claim stats: ${String(error)}`),
    round: async () => {
      const { claimed, racesLost } = stats;
      if (`${claimed}/${racesLost}` === last) return;
      last = `${claimed}/${racesLost}`;
      logger.info(`work claims: ${claimed} claimed, ${racesLost} claim races lost to other claimers`, {
        claimed,
        racesLost,
      });
    },
  });
}
