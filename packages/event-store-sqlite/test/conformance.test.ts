import { join } from 'node:path';
import { describeEventStoreConformance } from '@demiurge/event-store/testing';
import { openSqliteEventStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

describeEventStoreConformance({
  name: 'sqlite',
  createStorage: () => tempDir(),
  open: (dir, options) => openSqliteEventStore({ ...options, path: join(dir.path, 'runtime.sqlite3') }),
  disposeStorage: (dir) => dir.remove(),
});
