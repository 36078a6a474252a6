#!/usr/bin/env node
// Runs the benchmarks through turbo with the pinned pnpm (fetched through npx when it is not on the
// PATH, as on a fresh machine): turbo needs the package manager's binary to run package scripts.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pnpmCommand } from './setup.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [pnpm, ...pre] = pnpmCommand();
const result = spawnSync(pnpm, [...pre, 'exec', 'turbo', 'run', 'bench', '--log-prefix=none'], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
