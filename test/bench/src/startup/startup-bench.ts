import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countLabel } from '../config.js';
import { type BenchResult, compared, reference } from '../results.js';
import { CLI_BIN, demiurge, median, NO_CODE_CACHE, startServe, wallMs } from './processes.js';
import { seedHome } from './seed-home.js';

const HELP_TARGET = 2;
const STATUS_TARGET = 3;
const SERVE_TARGET = 4;
const SLOT_BUDGET_MS = 100;

interface SlotModuleLine {
  readonly msg: string;
  readonly slotId: string;
  readonly source: string;
  readonly ms: number;
}

/**
 * Start-up figures, whole processes of the built CLI against `node -e "require('better-sqlite3')"` (the
 * runtime's floor), each the median of `runs` wall times in the same run: `--help`, `status` on a home of
 * `statusEvents` events (seeded through the store, read models current, one untimed run first), `serve` until
 * its socket accepts (after one untimed start that compiled the slot modules); then the slot overhead of the
 * first turn of a fresh host after the first ever start: the slot modules' import at start (the host's log)
 * plus the serial slot runs of that turn (`slot.finished` durations).
 */
export async function benchStartup(
  runs: number,
  statusEvents: number,
  log: (line: string) => void,
): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'demiurge-bench-startup-'));
  try {
    log(`start-up: ${runs} rounds of node -e "require('better-sqlite3')", --help, status and serve (${CLI_BIN})`);
    const statusHome = join(dir, 'status-home');
    demiurge(['init', '--home', statusHome]);
    const seeded = await seedHome(statusHome, statusEvents);
    wallMs([CLI_BIN, 'status', '--home', statusHome]);
    const serveHome = join(dir, 'serve-home');
    demiurge(['init', '--home', serveHome]);
    const first = await startServe(serveHome);
    await first.stop();
    const compiledMs = preloadMs(first.stderr());
    // Interleaved rounds: the baseline and each command see the same load of a shared machine. The untimed runs
    // above wrote the runtime's code cache of `status` and `serve`; the rounds without it are for reference.
    const times = {
      baseline: [] as number[],
      help: [] as number[],
      status: [] as number[],
      serve: [] as number[],
      statusCold: [] as number[],
      serveCold: [] as number[],
    };
    for (let i = 0; i < runs; i++) {
      times.baseline.push(wallMs(['-e', "require('better-sqlite3')"]));
      times.help.push(wallMs([CLI_BIN, '--help']));
      times.status.push(wallMs([CLI_BIN, 'status', '--home', statusHome]));
      const host = await startServe(serveHome);
      times.serve.push(host.acceptedMs);
      await host.stop();
      times.statusCold.push(wallMs([CLI_BIN, 'status', '--home', statusHome], NO_CODE_CACHE));
      const cold = await startServe(serveHome, NO_CODE_CACHE);
      times.serveCold.push(cold.acceptedMs);
      await cold.stop();
    }
    const [baseline, help, status, serve, statusCold, serveCold] = Object.values(times).map(median) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    log(
      `  baseline ${baseline.toFixed(0)} ms, --help ${help.toFixed(0)} ms, status on ${seeded} events ` +
        `${status.toFixed(0)} ms (${statusCold.toFixed(0)} ms without the code cache), serve until its socket ` +
        `accepts ${serve.toFixed(0)} ms (${serveCold.toFixed(0)} ms without)`,
    );

    const turnHome = join(dir, 'turn-home');
    demiurge(['init', '--home', turnHome]);
    const firstEver = await startServe(turnHome);
    await firstEver.stop();
    const fresh = await startServe(turnHome);
    let loaded: SlotModuleLine[];
    try {
      demiurge(['run', 'hello', '--home', turnHome]);
      loaded = slotLines(fresh.stderr());
    } finally {
      await fresh.stop();
    }
    const importMs = preloadMs(fresh.stderr());
    const runMs = serialSlotRunMs(
      demiurge(['events', '--home', turnHome, '--json', '--type', 'slot.started', 'slot.finished']),
    );
    const overhead = importMs + runMs;
    const sources = [...new Set(loaded.map((l) => l.source))].join('+') || 'none';
    log(
      `  first turn after the first ever start: slot modules ${importMs.toFixed(1)} ms (${sources}), ` +
        `serial slot runs ${runMs} ms; the first ever start compiled in ${compiledMs.toFixed(0)} ms`,
    );

    return [
      compared('demiurge --help vs node require(better-sqlite3)', 'ms', help, baseline, HELP_TARGET, 'at most'),
      compared(
        `demiurge status, ${countLabel(statusEvents)}-event home vs node require(better-sqlite3)`,
        'ms',
        status,
        baseline,
        STATUS_TARGET,
        'at most',
      ),
      compared(
        'demiurge serve until its socket accepts vs node require(better-sqlite3)',
        'ms',
        serve,
        baseline,
        SERVE_TARGET,
        'at most',
      ),
      compared(
        `first turn slot overhead after the first start (${sources}) vs ${SLOT_BUDGET_MS} ms`,
        'ms',
        overhead,
        SLOT_BUDGET_MS,
        1,
        'at most',
      ),
      { name: 'slot modules compiled at the first ever start', value: Math.round(compiledMs), unit: 'ms' },
      reference(
        `demiurge status, ${countLabel(statusEvents)}-event home, no code cache, vs node require(better-sqlite3)`,
        'ms',
        statusCold,
        baseline,
      ),
      reference(
        'demiurge serve until its socket accepts, no code cache, vs node require(better-sqlite3)',
        'ms',
        serveCold,
        baseline,
      ),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The host's `slot module …` log records (serve --log-json). */
function slotLines(stderr: string): SlotModuleLine[] {
  const lines: SlotModuleLine[] = [];
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    const record = JSON.parse(line) as Partial<SlotModuleLine>;
    if (record.msg?.startsWith('slot module ') && typeof record.ms === 'number') lines.push(record as SlotModuleLine);
  }
  return lines;
}

/** The host's `slot modules of core … loaded in … ms` record: the wall time of importing them all at start. */
function preloadMs(stderr: string): number {
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    const record = JSON.parse(line) as { msg?: string; ms?: number };
    if (record.msg?.startsWith('slot modules of core ') && typeof record.ms === 'number') return record.ms;
  }
  throw new Error(`the host logged no "slot modules of core" record: ${stderr}`);
}

/** The summed `durationMs` of the serial slot runs in an NDJSON list of slot.started/slot.finished events. */
function serialSlotRunMs(ndjson: string): number {
  const serial = new Set<string>();
  let total = 0;
  for (const line of ndjson.split('\n')) {
    if (line.trim() === '') continue;
    const event = JSON.parse(line) as { type: string; data: { slotRunId: string; mode?: string; durationMs?: number } };
    if (event.type === 'slot.started' && event.data.mode === 'serial') serial.add(event.data.slotRunId);
    if (event.type === 'slot.finished' && serial.has(event.data.slotRunId)) total += event.data.durationMs ?? 0;
  }
  return total;
}
