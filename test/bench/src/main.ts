import { join } from 'node:path';
import { benchConcurrentAppends, benchSequentialAppends } from './append-bench.js';
import { benchSizes, countLabel, IN_FLIGHT } from './config.js';
import { benchPostgres } from './pg-bench.js';
import { benchRebuild } from './rebuild-bench.js';
import { type BenchResult, compared, formatTable, writeResults } from './results.js';
import { benchStartup } from './startup/startup-bench.js';
import { benchClaimSucceed, benchFourProcesses } from './work-bench.js';

/** dist/main.js → the repository root. */
const RESULTS_PATH = join(import.meta.dirname, '..', '..', '..', 'bench-results.json');

const APPEND_TARGET = 0.6;
const GROUP_COMMIT_TARGET = 3;
const REBUILD_TARGET = 0.5;
const RSS_TARGET = 1.25;
const WORK_TARGET = 0.5;

function log(line: string): void {
  console.log(`[bench] ${line}`);
}

async function main(): Promise<void> {
  const sizes = benchSizes();
  const started = performance.now();
  log(`size ${sizes.label} (BENCH_SIZE=small shrinks every workload)`);
  const results: BenchResult[] = [];

  for (const [synchronous, count] of [
    ['FULL', sizes.sequentialFull],
    ['NORMAL', sizes.sequentialNormal],
  ] as const) {
    log(`sequential appends, synchronous=${synchronous}: ${count} per side over ${sizes.streams} streams`);
    const r = await benchSequentialAppends(synchronous, count, sizes.streams);
    log(`  store ${Math.round(r.store)} appends/s, raw ${Math.round(r.raw)} appends/s`);
    results.push(
      compared(`append sequential ${synchronous} (1 projector)`, 'appends/s', r.store, r.raw, APPEND_TARGET),
    );
  }

  const events = sizes.concurrentRounds * IN_FLIGHT;
  log(`${IN_FLIGHT} appends in flight, FULL: ${events} store events, ${sizes.concurrentRaw} raw one-row transactions`);
  const c = await benchConcurrentAppends(sizes.concurrentRounds, sizes.concurrentRaw);
  log(`  store ${Math.round(c.store)} events/s, raw ${Math.round(c.raw)} transactions/s`);
  results.push(
    compared(`append ${IN_FLIGHT} in flight FULL (group commit)`, 'events/s', c.store, c.raw, GROUP_COMMIT_TARGET),
  );

  const large = countLabel(sizes.rebuildLarge);
  const small = countLabel(sizes.rebuildSmall);
  const rb = await benchRebuild(sizes.rebuildLarge, sizes.rebuildSmall, sizes.rebuildRepeats, log);
  const perSecond = (r: { events: number; durationMs: number }) => (r.events * 1000) / r.durationMs;
  results.push(
    compared(
      `rebuild ${large} events (3 projectors)`,
      'events/s',
      perSecond(rb.storeLarge),
      perSecond(rb.rawLarge),
      REBUILD_TARGET,
    ),
    compared(
      `rebuild peak RSS ${large} vs ${small}`,
      'MiB',
      rb.storeLarge.maxRssKiB / 1024,
      rb.storeSmall.maxRssKiB / 1024,
      RSS_TARGET,
      'at most',
    ),
  );

  results.push(
    { name: `store open check (bounded), ${large} events`, value: Math.round(rb.checks.boundedMs), unit: 'ms' },
    { name: `store quick_check of every page, ${large} events`, value: Math.round(rb.checks.fullMs), unit: 'ms' },
    {
      name: `hash chain verification, ${large} events`,
      value: Math.round(rb.checks.chainEventsPerSecond),
      unit: 'events/s',
    },
  );

  log(`work items through claim then succeed, one worker: ${sizes.workItems} per side`);
  const w = await benchClaimSucceed(sizes.workItems);
  log(`  store ${Math.round(w.store)} items/s, raw ${Math.round(w.raw)} items/s`);
  results.push(compared('work items claim+succeed, 1 worker FULL', 'items/s', w.store, w.raw, WORK_TARGET));
  log(`work items, four processes on one file: ${sizes.workItemsContended} items`);
  const four = await benchFourProcesses(sizes.workItemsContended);
  log(`  ${Math.round(four)} items/s`);
  results.push({ name: 'work items claim+succeed, 4 processes FULL', value: Math.round(four), unit: 'items/s' });

  results.push(...(await benchPostgres(sizes.label, log)));

  results.push(...(await benchStartup(sizes.startupRuns, sizes.statusEvents, log)));

  console.log();
  console.log(formatTable(results));
  console.log();
  writeResults(RESULTS_PATH, results);
  log(`wrote ${RESULTS_PATH} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
