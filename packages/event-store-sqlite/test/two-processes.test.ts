import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { RecordedEvent } from '@demiurge/contracts';
import { counterProjector, testEventRegistry } from '@demiurge/event-store/testing';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openSqliteEventStore } from '../src/index.js';
import { tempDir } from './temp-dir.js';

interface Report {
  name: string;
  ok: number;
  sharedOk: number;
  conflicts: number;
  otherErrors: string[];
}

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

it('two processes append to one file: nothing lost, conflicts typed, no SQLITE_BUSY, tailing sees both', async () => {
  const path = join(dir.path, 'shared.sqlite3');
  const store = await openSqliteEventStore({
    path,
    registry: testEventRegistry,
    projectors: [counterProjector],
    tailIntervalMs: 20,
  });
  const seen: RecordedEvent[] = [];
  const sub = store.events$.subscribe((e) => seen.push(e));
  const rounds = 150;
  const children = ['p1', 'p2'].map((name) =>
    fork(join(import.meta.dirname, 'fixtures', 'appender.mjs'), [path, name, String(rounds)], { stdio: 'inherit' }),
  );
  await Promise.all(children.map((c) => new Promise((resolve) => c.once('message', resolve))));
  const reports = Promise.all(
    children.map(
      (c) =>
        new Promise<Report>((resolve, reject) => {
          c.on('message', (m: { report?: Report }) => m.report && resolve(m.report));
          c.once('exit', (code) => code !== 0 && reject(new Error(`appender exited with ${code}`)));
        }),
    ),
  );
  for (const c of children) c.send('go');
  const [a, b] = await reports;
  expect(a!.otherErrors).toEqual([]);
  expect(b!.otherErrors).toEqual([]);
  expect(a!.conflicts + b!.conflicts).toBeGreaterThan(0);
  const total = a!.ok + b!.ok;
  expect(a!.ok - a!.sharedOk).toBe(rounds);
  expect(a!.sharedOk + b!.sharedOk + a!.conflicts + b!.conflicts).toBe(2 * rounds);
  expect(await store.head()).toBe(total);
  const shared = await store.readStream('shared');
  expect(shared.map((e) => e.streamVersion)).toEqual(shared.map((_, i) => i + 1));
  expect(shared).toHaveLength(a!.sharedOk + b!.sharedOk);
  const positions = (await store.readAll()).map((e) => e.position);
  expect(positions).toEqual(positions.map((_, i) => i + 1));
  // both processes chained their events to whatever the other had committed before
  expect(await store.verifyChain({ batchSize: 7 })).toMatchObject({ ok: true, eventsChecked: total });
  expect(await store.projection('counter').get('totals', 'all')).toBe(total);
  const live = { ...(await store.projection('counter').dump()) };
  await store.rebuild();
  expect(await store.projection('counter').dump()).toEqual(live);
  const deadline = Date.now() + 5000;
  while (seen.length < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(seen.map((e) => e.position)).toEqual(positions);
  sub.unsubscribe();
  await store.close();
});

it('several processes opening a fresh file at once all migrate it safely', async () => {
  const path = join(dir.path, 'fresh', 'runtime.sqlite3');
  const names = ['o1', 'o2', 'o3', 'o4'];
  const codes = await Promise.all(
    names.map(
      (name) =>
        new Promise<number | null>((resolve) => {
          fork(join(import.meta.dirname, 'fixtures', 'opener.mjs'), [path, name], { stdio: 'inherit' }).once(
            'exit',
            resolve,
          );
        }),
    ),
  );
  expect(codes).toEqual([0, 0, 0, 0]);
  const store = await openSqliteEventStore({ path, registry: testEventRegistry, projectors: [counterProjector] });
  expect((await store.readAll()).map((e) => e.streamId).sort()).toEqual(names);
  expect(await store.projection('counter').list('streams')).toHaveLength(4);
  await store.close();
});

it("a process's projectors catch up with events another process appended without them", async () => {
  const path = join(dir.path, 'mixed.sqlite3');
  const store = await openSqliteEventStore({ path, registry: testEventRegistry, projectors: [counterProjector] });
  await store.append({
    streamType: 'counter',
    streamId: 'local-1',
    expectedVersion: 'no_stream',
    events: [{ type: 'test.created', data: { name: 'local-1' } }],
  });
  const code = await new Promise<number | null>((resolve) => {
    fork(join(import.meta.dirname, 'fixtures', 'opener.mjs'), [path, 'remote', 'no-projectors'], {
      stdio: 'inherit',
    }).once('exit', resolve);
  });
  expect(code).toBe(0);
  expect(await store.projection('counter').get('streams', 'remote')).toBeUndefined();
  await store.append({
    streamType: 'counter',
    streamId: 'local-2',
    expectedVersion: 'no_stream',
    events: [{ type: 'test.created', data: { name: 'local-2' } }],
  });
  expect((await store.projection('counter').list<{ name: string }>('streams')).map((s) => s.name)).toEqual([
    'local-1',
    'local-2',
    'remote',
  ]);
  expect(await store.projection('counter').checkpoint()).toMatchObject({ position: 3 });
  await store.close();
});
