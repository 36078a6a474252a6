import { summarizeProjections } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { benchRegistry } from './fixtures.js';
import { openBenchProjectors } from './open-projectors.js';

/** `node open-child.js <path>`: what `demiurge status` does with the store, in a fresh process. */
const path = process.argv[2]!;
const store = await openSqliteEventStore({ path, registry: benchRegistry, projectors: openBenchProjectors });
await summarizeProjections(store);
await store.head();
await store.close();
