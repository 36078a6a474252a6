import { join } from 'node:path';
import { describeEventStoreConformance } from '@demiurge/event-store/testing';
import { openSqliteEventStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

describeEventStoreConformance({
  name: 'sqlite',
  createStorage: () => tempDir(),
  // Every store the suite opens (the property runs' random conflicting group commits included) must close
  // with a hash chain that verifies.
  open: async (dir, options) => {
    const store = await openSqliteEventStore({ ...options, path: join(dir.path, 'runtime.sqlite3') });
    const close = store.close.bind(store);
    return Object.assign(store, {
      close: async () => {
        const chain = await store.verifyChain().catch(() => undefined); // a closed store has nothing to check
        if (chain && !chain.ok) throw new Error(`the hash chain broke: ${JSON.stringify(chain.firstBreak)}`);
        await close();
      },
    });
  },
  disposeStorage: (dir) => dir.remove(),
});
