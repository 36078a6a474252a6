import { defineConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// The suites wait on CLI child processes, not on the worker: run the files side by side even on 2 cores.
export default defineConfig({ test: sharedTestConfig({ maxWorkers: 3 }) });
