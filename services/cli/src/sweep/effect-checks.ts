import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckProblem } from '@demiurge/crash-sweep';
import type { DriveContext } from './host-driver.js';

/** The file the scenarios' shell effects append a line to (`echo "$DEMIURGE_TASK_ID …" >> effects.txt`). */
export const EFFECTS_FILE = 'effects.txt';

/**
 * The checks of every run once its host stopped: each acknowledged submit's session, run and turn in the log;
 * no `Idempotency-Key` twice at the webhook receiver; every webhook delivery the log calls sent received; no
 * line of the effects file twice (a tool's side effect performed once at most).
 */
export async function effectChecks(ctx: DriveContext): Promise<CheckProblem[]> {
  const problems: CheckProblem[] = [];
  for (const ack of ctx.acks) {
    for (const [what, id] of [
      ['session', ack.session_id],
      ['run', ack.run_id],
      ['turn', ack.turn_id],
    ] as const) {
      if ((await ctx.log.stream(id)).length === 0) {
        problems.push({
          check: 'acknowledged submit lost',
          detail: `${what} ${id} of an acknowledged submit has no events`,
        });
      }
    }
  }
  if (ctx.sink) {
    for (const [key, n] of ctx.sink.duplicates()) {
      problems.push({ check: 'delivery sent twice', detail: `Idempotency-Key ${key} received ${n} times` });
    }
    for (const d of await ctx.log.deliveries()) {
      if (d.channel === 'webhook' && d.status === 'sent' && !ctx.sink.counts.has(d.deliveryId)) {
        problems.push({
          check: 'delivery recorded sent, never received',
          detail: `${d.deliveryId} is sent in the log`,
        });
      }
    }
  }
  const effects = join(ctx.home.workspace, EFFECTS_FILE);
  if (existsSync(effects)) {
    const seen = new Map<string, number>();
    for (const line of readFileSync(effects, 'utf8').split('\n').filter(Boolean))
      seen.set(line, (seen.get(line) ?? 0) + 1);
    for (const [line, n] of seen) {
      if (n > 1) problems.push({ check: 'tool effect performed twice', detail: `"${line}" appended ${n} times` });
    }
  }
  return problems;
}
