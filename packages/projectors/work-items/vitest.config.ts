import { defineConfig } from 'vitest/config';
import { storeProjects } from '../../../vitest.shared.ts';

// The rebuild-equality property on the in-memory store and again on PostgreSQL (DEMIURGE_TEST_STORE).
export default defineConfig({ test: storeProjects('memory', ['src/work-items.property.test.ts']) });
