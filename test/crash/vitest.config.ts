import { defineConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// The crash loop keeps four host processes busy on its own: the unhappy-path files run next to it, one at a time.
export default defineConfig({ test: sharedTestConfig({ maxWorkers: 2 }) });
