import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFakeClock, createSeededIdGenerator } from '@demiurge/contracts/testing';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { workItemsProjector } from '@demiurge/projector-work-items';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DurableWorkRuntime } from '../src/index.js';

// How many pages of the work-items read model one claim-then-succeed commit writes to the WAL (what a FULL
// commit then syncs), counted from the WAL's frames: each b-tree leaf of `projection_documents` (the only
// documents here are work-items') is one 4 KiB write per commit. Deterministic: the same commands write the
// same pages. See docs/performance.md, "The fifth round".

const KIND = 'task.completion';
const WAL_HEADER = 32;
const FRAME_HEADER = 24;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'demiurge-claim-pages-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A SQLite varint at `at`: its value and where the next field starts. */
function varint(buf: Buffer, at: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    const byte = buf[at + i]!;
    if (i === 8) return [value * 256 + byte, at + 9];
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, at + i + 1];
  }
  throw new Error('unreachable');
}

/** The first column of the first cell of an index b-tree leaf (`projection_documents` is one: WITHOUT ROWID). */
function firstColumnOfIndexLeaf(page: Buffer): string | undefined {
  if (page[0] !== 0x0a || page.readUInt16BE(3) === 0) return undefined;
  const [, record] = varint(page, page.readUInt16BE(8)); // the cell's payload size, then its record
  const [headerSize, types] = varint(page, record);
  const [type] = varint(page, types);
  if (type < 13 || type % 2 === 0) return undefined; // not text
  const start = record + headerSize;
  return page.toString('utf8', start, start + (type - 13) / 2);
}

/** Commits and work-items document pages written to the WAL from byte `from` on. */
function countSince(path: string, from: number): { commits: number; documentPages: number } {
  const wal = readFileSync(`${path}-wal`);
  const pageSize = wal.readUInt32BE(8);
  let commits = 0;
  let documentPages = 0;
  for (let at = from; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) {
    if (wal.readUInt32BE(at + 4) > 0) commits++;
    const page = wal.subarray(at + FRAME_HEADER, at + FRAME_HEADER + pageSize);
    if (firstColumnOfIndexLeaf(page) === workItemsProjector.name) documentPages++;
  }
  return { commits, documentPages };
}

it('a claim and a success each write two pages of the work-items read model: the item and its kind’s queue', async () => {
  const path = join(dir, 'runtime.sqlite3');
  const clock = createFakeClock(Date.parse('2026-05-01T09:00:00.000Z'));
  const ids = createSeededIdGenerator(clock, 3);
  const open = () =>
    openSqliteEventStore({ path, projectors: [workItemsProjector], clock, ids, synchronous: 'NORMAL' });
  let store = await open();
  let work = new DurableWorkRuntime({ store, clock, ids, owner: 'pages' });
  for (let i = 0; i < 600; i++) {
    await work.enqueue({ kind: KIND, subjectId: `s${i}`, payload: { taskId: ids.next('tsk') } });
    clock.advance(1);
  }
  await store.close(); // checkpoints and empties the WAL
  store = await open();
  work = new DurableWorkRuntime({ store, clock, ids, owner: 'pages' });
  try {
    const cycle = async () => {
      const [claim] = await work.claimDue({ kind: KIND, limit: 1 });
      await work.succeed(claim!);
    };
    for (let i = 0; i < 5; i++) await cycle();
    const from = statSync(`${path}-wal`).size;
    expect((from - WAL_HEADER) % (FRAME_HEADER + 4096)).toBe(0);
    const items = 40; // 80 commits: well under the 1,000 pages that would make SQLite restart the WAL
    for (let i = 0; i < items; i++) await cycle();
    const { commits, documentPages } = countSince(path, from);
    expect(commits).toBe(2 * items);
    // Version 1 wrote 3 per commit (the claim: the item, its claimable and claimable-by-kind entries' pages and
    // the leases page; the success: the item and the leases page); the queue puts a kind's leases just before
    // its waiting items, so the lease a claim puts and the success deletes share the page the claim took the
    // waiting entry from. A split now and then adds a page.
    expect(documentPages / commits).toBeLessThanOrEqual(2.25);
    expect(documentPages / commits).toBeGreaterThanOrEqual(1.9);
  } finally {
    await store.close();
  }
});
