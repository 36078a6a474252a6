import { describeEventStoreConformance } from '@demiurge/event-store/testing';
import { openPostgresEventStore } from '../src/index.js';
import { testServer } from './test-server.js';

const { server, describePg } = await testServer();

describePg('postgres', () => {
  describeEventStoreConformance<string>({
    name: 'postgres',
    createStorage: () => server!.createDatabase(),
    // Every store the suite opens must close with a hash chain that verifies.
    open: async (url, options) => {
      const store = await openPostgresEventStore({ ...options, url });
      const close = store.close.bind(store);
      return Object.assign(store, {
        close: async () => {
          const chain = await store.verifyChain().catch(() => undefined); // a closed store has nothing to check
          if (chain && !chain.ok) throw new Error(`the hash chain broke: ${JSON.stringify(chain.firstBreak)}`);
          await close();
        },
      });
    },
    disposeStorage: (url) => server!.dropDatabase(url),
  });
});
