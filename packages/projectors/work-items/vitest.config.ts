import { defineConfig } from 'vitest/config';
import { storeProjects } from '../../../vitest.shared.ts';

// The rebuild-equality property and the reader's listings across kinds on the in-memory store and again on
// PostgreSQL (DEMIURGE_TEST_STORE).
export default defineConfig({
  test: storeProjects('memory', ['src/work-items.property.test.ts', 'src/work-items.reader.test.ts']),
});
