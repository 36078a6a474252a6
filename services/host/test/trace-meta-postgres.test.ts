import { createIdGenerator, type EventMeta, systemClock } from '@demiurge/contracts';
import { controlPlaneProjectors, DurableWorkRuntime } from '@demiurge/control-plane';
import { openPostgresEventStore } from '@demiurge/event-store-postgres';
import { startTestPostgres, type TestPostgres } from '@demiurge/event-store-postgres/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { traceRoot } from '../src/telemetry/trace-ids.js';
import { recordTraceMeta, traceOf } from '../src/telemetry/trace-meta.js';

let server: TestPostgres | undefined;
let reason = '';
try {
  server = await startTestPostgres();
  afterAll(() => server?.stop());
} catch (err) {
  if (process.env.CI) throw err;
  reason = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}
const describePg = server ? describe : describe.skip;

describePg(`trace meta on PostgreSQL${server ? '' : ` (skipped: PostgreSQL could not start here: ${reason})`}`, () => {
  it('a claim decided under the log-head lock records the trace of its work item, as an appended one does', async () => {
    const store = await openPostgresEventStore({
      url: await server!.createDatabase(),
      projectors: controlPlaneProjectors,
    });
    try {
      recordTraceMeta(store);
      const ids = createIdGenerator(systemClock);
      const turnId = ids.next('trn');
      // Enqueued during a turn: the item joins the turn's trace.
      const inTurn = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'turn', meta: { turnId } });
      const { workId } = await inTurn.enqueue({
        kind: 'task.completion',
        subjectId: 's1',
        payload: { taskId: ids.next('tsk') },
      });
      const worker = new DurableWorkRuntime({ store, clock: systemClock, ids, owner: 'worker' });
      expect(store.appendDecided).toBeDefined();
      const [claim] = await worker.claimDue({ kind: 'task.completion', limit: 1 });
      expect(claim?.workId).toBe(workId);
      await worker.succeed(claim!);
      const events = await store.readStream(workId);
      expect(events.map((e) => e.type)).toEqual(['work.enqueued', 'work.claimed', 'work.succeeded']);
      for (const e of events) expect(traceOf(e.meta as EventMeta)).toEqual(traceRoot(turnId));
    } finally {
      await store.close();
    }
  });
});
