import { createIdGenerator, systemClock } from '@demiurge/contracts';
import { controlPlaneProjectors, DurableWorkRuntime } from '@demiurge/control-plane';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';

/** One of four processes of the contention benchmark: claims and completes until nothing is left. */
const [path, owner] = process.argv.slice(2) as [string, string];
const store = await openSqliteEventStore({ path, projectors: controlPlaneProjectors });
const work = new DurableWorkRuntime({ store, clock: systemClock, ids: createIdGenerator(systemClock), owner });
let done = 0;
process.send?.({ ready: true });
await new Promise((resolve) => process.once('message', resolve));
for (let idle = 0; idle < 3; ) {
  const claims = await work.claimDue({ kind: 'task.completion', limit: 8 });
  if (claims.length === 0) {
    idle =
      (await store.projection('work-items').list('queue', { prefix: 'task.completion/wait/', limit: 1 })).length === 0
        ? idle + 1
        : 0;
    continue;
  }
  for (const claim of claims) {
    await work.succeed(claim);
    done++;
  }
}
await store.close();
process.send?.({ done });
