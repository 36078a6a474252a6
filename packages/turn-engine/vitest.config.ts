import { defineConfig } from 'vitest/config';
import { storeProjects } from '../../vitest.shared.ts';

// The seed's unhappy paths (user cancel during a tool call, owner lease expired, resume after compaction,
// buffered completion; real child processes killed) on a SQLite file and again on PostgreSQL.
export default defineConfig({ test: storeProjects('sqlite', ['test/recovery.test.ts', 'test/cancel.test.ts']) });
