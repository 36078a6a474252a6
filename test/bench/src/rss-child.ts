/**
 * A child process that rebuilds one seeded log and reports its time and peak RSS to its parent,
 * so that each measurement starts from a clean process.
 * Usage: node rss-child.js <store|raw> <path> <expected events> <label>
 */
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { REBUILD_BATCH, type RebuildChildReport } from './child-protocol.js';
import { BENCH_TYPE, benchRegistry, REBUILD_PROJECTOR, rebuildProjectors } from './fixtures.js';
import { rawRebuild } from './raw-rebuild.js';

async function main(): Promise<void> {
  const [mode, path, expectedText, label] = process.argv.slice(2);
  if ((mode !== 'store' && mode !== 'raw') || !path || !expectedText) {
    throw new Error('usage: rss-child <store|raw> <path> <expected events> [label]');
  }
  const expected = Number(expectedText);
  const progress = progressPrinter(`${mode} ${label ?? ''}`.trim(), expected);
  const started = performance.now();
  const events = mode === 'store' ? await storeRebuild(path, progress) : rawRebuild(path, REBUILD_BATCH, progress);
  const durationMs = performance.now() - started;
  if (events !== expected) throw new Error(`${mode} rebuild applied ${events} events, expected ${expected}`);
  const report: RebuildChildReport = { mode, events, durationMs, maxRssKiB: process.resourceUsage().maxRSS };
  process.send?.(report, () => process.disconnect());
}

/** Opens the seeded store (its checkpoints are at the head), times `rebuild()` only, checks a total. */
async function storeRebuild(path: string, progress: (applied: number) => void): Promise<number> {
  const store = await openSqliteEventStore({ path, registry: benchRegistry, projectors: rebuildProjectors });
  try {
    const report = await store.rebuild({ batchSize: REBUILD_BATCH, onProgress: (p) => progress(p.eventsApplied) });
    const total = await store.projection(REBUILD_PROJECTOR.typeCounter).get<number>('types', BENCH_TYPE);
    if (total !== report.eventsApplied) throw new Error(`type counter is ${total}, expected ${report.eventsApplied}`);
    return report.eventsApplied;
  } finally {
    await store.close();
  }
}

/** Prints a line at every tenth of the work. */
function progressPrinter(label: string, total: number): (applied: number) => void {
  let next = total / 10;
  return (applied) => {
    if (applied < next || total < 500_000) return;
    console.log(`    rebuild ${label}: ${applied.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} events`);
    while (next <= applied) next += total / 10;
  };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
