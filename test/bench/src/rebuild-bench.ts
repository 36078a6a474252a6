import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { RebuildChildReport, RebuildMode } from './child-protocol.js';
import { countLabel } from './config.js';
import { seedLog } from './seed.js';
import { benchStoreChecks, type StoreCheckFigures } from './store-checks-bench.js';
import { withTempDir } from './temp-dir.js';

export interface RebuildFigures {
  /** The store's rebuilds of the large log, each in a fresh process. */
  readonly storeLarge: RebuildChildReport;
  /** The raw rebuilds of the same log, each in a fresh process. */
  readonly rawLarge: RebuildChildReport;
  /** The store's rebuild of the small log, for the RSS ratio. */
  readonly storeSmall: RebuildChildReport;
  /** The file checks and the chain verification on the large log. */
  readonly checks: StoreCheckFigures;
}

/**
 * Seeds a large and a small log, then rebuilds each in its own child process: the store on both
 * (time and peak RSS), the raw loop on the large one (time). The large rebuilds alternate raw and
 * store `repeats` times; their durations are summed and the highest peak RSS kept.
 */
export async function benchRebuild(
  large: number,
  small: number,
  repeats: number,
  log: (line: string) => void,
): Promise<RebuildFigures> {
  return withTempDir('rebuild', async (dir) => {
    const smallPath = join(dir, `log-${countLabel(small)}.sqlite3`);
    const largePath = join(dir, `log-${countLabel(large)}.sqlite3`);
    log(`seeding ${countLabel(small)} and ${countLabel(large)} events`);
    await seedLog(smallPath, small);
    const seedStarted = performance.now();
    await seedLog(largePath, large, (done) => {
      if (done % 200_000 === 0) log(`  seeded ${done.toLocaleString('en-US')} / ${large.toLocaleString('en-US')}`);
    });
    log(`  seeded ${countLabel(large)} in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

    const storeSmall = await runChild('store', smallPath, small, log);
    const raw: RebuildChildReport[] = [];
    const store: RebuildChildReport[] = [];
    for (let i = 0; i < repeats; i++) {
      raw.push(await runChild('raw', largePath, large, log));
      store.push(await runChild('store', largePath, large, log));
    }
    log(`store checks on the ${countLabel(large)} log: open (bounded), quick_check of every page, verifyChain`);
    const checks = await benchStoreChecks(largePath, large);
    log(
      `  ${(checks.bytes / 2 ** 20).toFixed(0)} MiB: open check ${checks.boundedMs.toFixed(0)} ms, full check ` +
        `${checks.fullMs.toFixed(0)} ms, chain ${Math.round(checks.chainEventsPerSecond).toLocaleString('en-US')} events/s`,
    );
    return { storeLarge: combine(store), rawLarge: combine(raw), storeSmall, checks };
  });
}

async function runChild(
  mode: RebuildMode,
  path: string,
  events: number,
  log: (line: string) => void,
): Promise<RebuildChildReport> {
  const label = countLabel(events);
  log(`rebuild ${label} events through the ${mode === 'store' ? 'store' : 'raw loop'} (child process)`);
  const child = fork(join(import.meta.dirname, 'rss-child.js'), [mode, path, String(events), label], {
    stdio: 'inherit',
  });
  const report = await new Promise<RebuildChildReport>((resolve, reject) => {
    let received: RebuildChildReport | undefined;
    child.on('message', (m) => {
      received = m as RebuildChildReport;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0 && received) resolve(received);
      else reject(new Error(`rebuild child (${mode}, ${label}) exited with ${signal ?? code} without a report`));
    });
  });
  const perSecond = Math.round((report.events * 1000) / report.durationMs);
  log(
    `  ${(report.durationMs / 1000).toFixed(2)} s, ${perSecond.toLocaleString('en-US')} events/s, ` +
      `peak RSS ${(report.maxRssKiB / 1024).toFixed(1)} MiB`,
  );
  return report;
}

/** Runs of one mode as one: events and durations summed, the highest peak RSS. */
function combine(runs: readonly RebuildChildReport[]): RebuildChildReport {
  return {
    mode: runs[0]!.mode,
    events: runs.reduce((sum, r) => sum + r.events, 0),
    durationMs: runs.reduce((sum, r) => sum + r.durationMs, 0),
    maxRssKiB: Math.max(...runs.map((r) => r.maxRssKiB)),
  };
}
