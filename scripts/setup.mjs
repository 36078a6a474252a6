#!/usr/bin/env node
// Installs what the workspace needs on a machine that has only Node and npm:
// the pinned pnpm (through npx when it is not on PATH), the frozen lockfile, and a build.
// Re-running it is cheap: the install is skipped while the lockfile is unchanged and turbo caches builds.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const pnpmVersion = pkg.packageManager.replace(/^pnpm@/, '');

export function pnpmCommand() {
  const probe = spawnSync('pnpm', ['--version'], { encoding: 'utf8', shell: process.platform === 'win32' });
  if (probe.status === 0 && probe.stdout.trim() === pnpmVersion) return ['pnpm'];
  return ['npx', '-y', `pnpm@${pnpmVersion}`];
}

export function run(cmd, args, opts = {}) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function installStamp() {
  const lock = readFileSync(join(root, 'pnpm-lock.yaml'));
  return createHash('sha256').update(lock).update(process.version).digest('hex');
}

/** Setup talks on stderr only: stdout belongs to the command that follows (`npm start` piped, `--json`). */
const QUIET = [0, 2, 2];

function main() {
  const env = { ...process.env };
  // better-sqlite3 compiles from source where its prebuilt binary cannot be downloaded;
  // node-gyp then needs the local Node headers. pnpm does not read npm's global nodedir.
  if (!env.npm_config_nodedir && existsSync('/usr/include/node/node.h')) env.npm_config_nodedir = '/usr';
  const [pnpm, ...pre] = pnpmCommand();
  const stampFile = join(root, 'node_modules', '.demiurge-install-stamp');
  const stamp = installStamp();
  const installed = existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp;
  if (!installed) {
    console.error(`[setup] installing dependencies with pnpm ${pnpmVersion} (frozen lockfile)`);
    const code = run(pnpm, [...pre, 'install', '--frozen-lockfile'], { env, stdio: QUIET });
    if (code !== 0) process.exit(code);
    writeFileSync(stampFile, stamp);
  }
  console.error('[setup] building packages');
  const code = run(pnpm, [...pre, 'exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], { env, stdio: QUIET });
  if (code !== 0) process.exit(code);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
