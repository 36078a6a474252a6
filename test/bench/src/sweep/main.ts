import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  EMMETT_TARGET,
  IN_FLIGHT_VS_BATCHED_TARGET,
  WORK_TARGET,
  WORKERS8_VS_RAW1_TARGET,
  WORKERS8_VS_RAW8_TARGET,
} from '../config.js';
import { alignedTable } from '../results.js';
import type { SweepPoint } from './child.js';

/**
 * The fsync sweep: issue 16's disk-moved rows (Emmett, one worker, 100 in flight, eight workers) measured at a
 * series of fsync latencies, each in a fresh process whose files are on a tmpfs and whose every fsync first
 * waits the given delay (`native/fsync-delay.c`, loaded with LD_PRELOAD). Each row is a ratio of two sides with
 * different numbers of fsyncs per unit of work, so it moves with the disk's latency; this shows how, on one
 * machine, with the latency held still instead of drifting under the run.
 *
 * `BENCH_SWEEP`: `quick` (the default; two latencies at the small sizes, run after every `pnpm bench` so the
 * sweep cannot rot), `full` (eight latencies at the sizes of `BENCH_SIZE`) or `off`.
 */
const QUICK_DELAYS = [0, 300];
const FULL_DELAYS = [0, 25, 50, 75, 100, 150, 250, 400];

const BENCH_DIR = join(import.meta.dirname, '..', '..');
const SHIM_SOURCE = join(BENCH_DIR, 'native', 'fsync-delay.c');
const RESULTS_PATH = join(BENCH_DIR, '..', '..', 'bench-sweep.json');
const TMPFS = '/dev/shm';

function log(line: string): void {
  console.log(`[sweep] ${line}`);
}

/** Why the sweep cannot run on this machine, or undefined when it can. */
function unavailable(): string | undefined {
  if (process.platform !== 'linux') return `it needs Linux (LD_PRELOAD and ${TMPFS}), this is ${process.platform}`;
  try {
    accessSync(TMPFS, constants.W_OK);
  } catch {
    return `${TMPFS} (a tmpfs) is not writable here`;
  }
  const cc = spawnSync('cc', ['--version'], { stdio: 'ignore' });
  if (cc.error || cc.status !== 0) return 'no C compiler (`cc`) to build the fsync shim';
  return undefined;
}

function compileShim(dir: string): string {
  const out = join(dir, 'fsync-delay.so');
  const cc = spawnSync('cc', ['-O2', '-shared', '-fPIC', '-o', out, SHIM_SOURCE, '-ldl'], { encoding: 'utf8' });
  if (cc.status !== 0) throw new Error(`could not build ${SHIM_SOURCE}: ${cc.stderr || cc.error?.message}`);
  return out;
}

function measure(shim: string, tmp: string, delayUs: number, size: string): SweepPoint {
  const child = spawnSync(process.execPath, [join(import.meta.dirname, 'child.js')], {
    env: { ...process.env, LD_PRELOAD: shim, FSYNC_DELAY_US: String(delayUs), TMPDIR: tmp, BENCH_SIZE: size },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  const last = child.stdout.trim().split('\n').pop() ?? '';
  if (child.status !== 0 || !last.startsWith('{')) {
    throw new Error(`the sweep's child at ${delayUs} µs exited with ${child.status ?? child.signal}: ${last}`);
  }
  return JSON.parse(last) as SweepPoint;
}

const cell = (ratio: number | null, target: number) =>
  ratio === null ? 'not measured' : `${ratio.toFixed(2)}${ratio >= target ? ' met' : ''}`;

function formatPoints(points: readonly SweepPoint[]): string {
  const header = [
    'fsync delay µs',
    'probe µs',
    `Emmett >= ${EMMETT_TARGET}`,
    `1 worker >= ${WORK_TARGET}`,
    `100 in flight >= ${IN_FLIGHT_VS_BATCHED_TARGET}`,
    `8 workers >= ${WORKERS8_VS_RAW1_TARGET}`,
    '8 workers no fsync',
    `8 vs raw 8 >= ${WORKERS8_VS_RAW8_TARGET}`,
  ];
  const rows = points.map((p) => [
    String(p.delayUs),
    String(p.probeUs),
    cell(p.emmett, EMMETT_TARGET),
    cell(p.oneWorker, WORK_TARGET),
    cell(p.inFlight, IN_FLIGHT_VS_BATCHED_TARGET),
    cell(p.workers8, WORKERS8_VS_RAW1_TARGET),
    p.workers8NoFsync.toFixed(2),
    cell(p.workers8VsRaw8, WORKERS8_VS_RAW8_TARGET),
  ]);
  return alignedTable(header, rows);
}

function main(): void {
  const mode = process.env.BENCH_SWEEP ?? 'quick';
  if (mode === 'off') return;
  if (mode !== 'quick' && mode !== 'full') {
    throw new Error(`BENCH_SWEEP must be "quick", "full" or "off", not ${JSON.stringify(mode)}`);
  }
  const why = unavailable();
  if (why) {
    log(`skipped: ${why}`);
    return;
  }
  const delays = mode === 'full' ? FULL_DELAYS : QUICK_DELAYS;
  const size = mode === 'full' ? (process.env.BENCH_SIZE ?? 'full') : 'small';
  const shimDir = mkdtempSync(join(TMPFS, 'demiurge-sweep-shim-'));
  const tmp = mkdtempSync(join(TMPFS, 'demiurge-sweep-'));
  try {
    const shim = compileShim(shimDir);
    log(`${mode}: files on ${TMPFS}, every fsync delayed by ${delays.join(', ')} µs in turn, ${size} sizes`);
    const points = delays.map((delay) => {
      const point = measure(shim, tmp, delay, size);
      log(`  ${delay} µs asked, ${point.probeUs} µs measured`);
      return point;
    });
    // The sweep means nothing if the shim did not take: the probe must see at least the largest delay.
    const top = points[points.length - 1]!;
    if (top.probeUs < top.delayUs) {
      throw new Error(
        `the fsync shim did not take effect: ${top.delayUs} µs asked, the probe measured ${top.probeUs} µs`,
      );
    }
    console.log();
    console.log(formatPoints(points));
    console.log();
    writeFileSync(RESULTS_PATH, `${JSON.stringify(points, null, 2)}\n`);
    log(`wrote ${RESULTS_PATH}`);
  } finally {
    rmSync(shimDir, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
}

main();
