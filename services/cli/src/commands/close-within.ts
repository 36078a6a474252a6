import type { DemiurgeApp } from '@demiurge/host';
import { ExitCode } from '../cli-errors.js';
import type { CommandIo } from '../io.js';

/**
 * Closes the gateway and the host within the configured `shutdown.deadline_ms`. Past it, says on stderr what
 * the close still waits for (phase, runs, tasks, deliveries, background work) and ends the process with
 * status 1 even though that work holds it open: the next host start recovers what was left.
 */
export async function closeWithin(
  app: DemiurgeApp,
  closeGateway: () => Promise<unknown>,
  io: CommandIo,
): Promise<ExitCode> {
  const deadlineMs = app.config.shutdown.deadline_ms;
  const closed = (async () => {
    await closeGateway();
    await app.close();
  })();
  let timer: NodeJS.Timeout | undefined;
  const overran = await Promise.race([
    closed.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), deadlineMs);
    }),
  ]);
  clearTimeout(timer);
  if (!overran) return ExitCode.ok;
  io.err(
    `demiurge: shutdown did not finish within ${deadlineMs} ms (shutdown.deadline_ms); still waiting for ${await app.closeStatus()}`,
  );
  io.err('demiurge: exiting now; the next host start recovers what was left');
  // What the close waits for keeps the event loop alive: end the process once the message is out.
  setTimeout(() => process.exit(ExitCode.failure), 100).unref();
  return ExitCode.failure;
}

/**
 * After a host closed: a process that something still holds open (a handle the close missed) exits anyway
 * after `graceMs`, saying on stderr what held it, instead of leaving its parent waiting for it. The timer itself
 * holds nothing open.
 */
export function exitIfHeldOpen(code: number, io: CommandIo, graceMs = 3_000): void {
  setTimeout(() => {
    const holding = process.getActiveResourcesInfo();
    io.err(
      `demiurge: closed, but still held open after ${graceMs} ms by ${holding.join(', ') || 'nothing named'}; exiting`,
    );
    process.exit(code);
  }, graceMs).unref();
}
