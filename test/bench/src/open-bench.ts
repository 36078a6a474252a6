import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { BENCH_TYPE, benchData, benchRegistry, STREAM_TYPE, streamId } from './fixtures.js';
import { timed } from './interleave.js';
import { openBenchProjectors } from './open-projectors.js';
import { createStoreSchema } from './raw-db.js';
import { seedLog } from './seed.js';
import { withTempDir } from './temp-dir.js';

const open = (path: string) => openSqliteEventStore({ path, registry: benchRegistry, projectors: openBenchProjectors });

/** Whole-process wall time of a fresh process doing what `demiurge status` does with the store (open-child.ts). */
async function statusLikeOpen(path: string): Promise<number> {
  return timed(
    () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, [join(import.meta.dirname, 'open-child.js'), path], { stdio: 'inherit' });
        child.once('error', reject);
        child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`open child exited with ${code}`))));
      }),
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * A `status`-like open (a fresh process: open, summarise every projection, head, close) of a store holding `count` events right after a host ran (its read models built, then
 * a few commands committed through the store) against the same on an empty store: median of `repeats` each.
 */
export async function benchOpenAfterHost(count: number, repeats = 10): Promise<{ largeMs: number; emptyMs: number }> {
  return withTempDir('open', async (dir) => {
    const large = join(dir, 'large.sqlite3');
    const empty = join(dir, 'empty.sqlite3');
    await seedLog(large, count);
    await createStoreSchema(empty);
    const host = await open(large);
    await host.rebuild();
    for (let i = 0; i < 10; i++) {
      const id = streamId(i);
      await host.append({
        streamType: STREAM_TYPE,
        streamId: id,
        expectedVersion: 'any',
        events: [{ type: BENCH_TYPE, data: benchData(count + i) }],
      });
    }
    await host.close();
    await (await open(empty)).close();
    const largeMs: number[] = [];
    const emptyMs: number[] = [];
    for (let i = 0; i < repeats; i++) {
      largeMs.push(await statusLikeOpen(large));
      emptyMs.push(await statusLikeOpen(empty));
    }
    return { largeMs: median(largeMs), emptyMs: median(emptyMs) };
  });
}
