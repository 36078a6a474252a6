import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createIdGenerator, IdPrefix, systemClock } from '@demiurge/contracts';
import { DurableWorkRuntime, StaleClaimError } from '@demiurge/control-plane';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { hostProjectors } from '@demiurge/host';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, demiurgeJson, tempHome } from './cli.js';

let home: ReturnType<typeof tempHome>;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.remove());

const openStore = () => {
  mkdirSync(join(home.path, 'runtime'), { recursive: true, mode: 0o700 });
  return openSqliteEventStore({ path: join(home.path, 'runtime', 'runtime.sqlite3'), projectors: hostProjectors });
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The work item's claim fencing, on both sides of the one work item fold: a write naming a claim that no
 * longer holds the item (here a late `work.unknown` from a claimant whose lease expired and was taken over,
 * appended by a writer that skipped the token check) changes nothing — not the read model the CLI shows,
 * not the operator view, not the state the command side decides from.
 */
describe('work item claim fencing (child process)', () => {
  it('an outcome naming a stale claim token changes nothing: work show, status and work resolve agree', async () => {
    const ids = createIdGenerator(systemClock);
    let store = await openStore();
    const work = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'host-a', leaseMs: 50 });
    const { workId } = await work.enqueue({
      kind: 'delivery.send',
      subjectId: 'outbox',
      payload: { deliveryId: ids.next(IdPrefix.delivery) },
    });
    const first = await work.claim(workId);
    await sleep(80);
    const second = await work.claim(workId, { leaseMs: 3_600_000 }); // records the expiry, then a new claim
    await work.markSending(second);
    await store.append({
      streamType: 'work',
      streamId: workId,
      expectedVersion: 'any',
      events: [{ type: 'work.unknown', data: { workId, claimToken: first.claimToken, reason: 'a late writer' } }],
    });
    const late = (await store.readStream(workId)).at(-1)!;
    await store.close();

    // verify names the late write: the folds ignore it, and so does its reading of the log after it.
    const verify = await demiurge(['verify', '--json', '--home', home.path]);
    expect(verify.code).toBe(1);
    const report = JSON.parse(verify.stdout) as { log: { ok: boolean; violations: Record<string, unknown>[] } };
    expect(report.log.ok).toBe(false);
    expect(report.log.violations).toEqual([
      expect.objectContaining({
        kind: 'stale_token',
        position: late.position,
        event: 'work.unknown',
        state: 'sending',
      }),
    ]);

    const shown = await demiurgeJson<{ work: Record<string, unknown> }>(['work', 'show', workId, '--home', home.path]);
    expect(shown.json.work).toMatchObject({ status: 'sending', claimToken: second.claimToken, attempts: 2 });
    const status = await demiurgeJson<{ needsOperator: unknown[] }>(['status', '--home', home.path]);
    expect(status.json.needsOperator).toEqual([]);
    const resolve = await demiurge(['work', 'resolve', workId, '--decision', 'sent', '--home', home.path]);
    expect(resolve.code).toBe(1);
    expect(resolve.stderr).toMatch(
      new RegExp(`^demiurge: work(?: item)? ${workId} is sending; work\\.resolved is not allowed`),
    );

    store = await openStore();
    try {
      const again = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'host-a' });
      await expect(again.heartbeat(first)).rejects.toThrow(StaleClaimError);
      await again.succeed(second, { externalRef: 'msg-1' });
      expect(await again.get(workId)).toMatchObject({ status: 'succeeded', externalRef: 'msg-1', claimToken: null });
    } finally {
      await store.close();
    }
  });
});
