import { createInMemoryEventStore, createInMemoryLog } from './index.js';
import { describeEventStoreConformance } from './testing/index.js';

describeEventStoreConformance({
  name: 'in-memory',
  createStorage: createInMemoryLog,
  open: async (log, options) => createInMemoryEventStore({ ...options, log }),
});
