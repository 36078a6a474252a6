import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RecordedEvent } from '@demiurge/contracts';
import { createInMemoryEventStore, createInMemoryLog, dumpProjections } from '@demiurge/event-store';
import { hostProjectors } from '@demiurge/host';
import { verifyLog } from '@demiurge/lifecycle';
import { describe, expect, it } from 'vitest';

/**
 * Golden logs: event logs recorded from an older build (`scripts/record-golden.mjs`), replayed through
 * today's code — the event registry (schemas and upcasters), the lifecycle machines (`verifyLog`) and every
 * projector of the host — and compared with the projections recorded beside them. A change that alters
 * what an old log means (a schema that no longer reads it, a machine that refuses it, a projector that
 * builds something else from it) fails here; re-record only when that change is intended.
 */
const golden = resolve(import.meta.dirname, '..', '..', 'golden');
const logs = readdirSync(golden)
  .filter((f) => f.endsWith('.jsonl'))
  .map((f) => f.slice(0, -'.jsonl'.length));

function readLog(name: string): RecordedEvent[] {
  return readFileSync(join(golden, `${name}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RecordedEvent);
}

/** An in-memory store opened on the recorded log: every projector is built from it at open. */
function replay(events: readonly RecordedEvent[]) {
  const log = createInMemoryLog();
  for (const event of events) {
    log.rows.push({ ...event, data: JSON.stringify(event.data), meta: JSON.stringify(event.meta) });
    const stream = log.streams.get(event.streamId);
    if (stream) stream.positions.push(event.position);
    else log.streams.set(event.streamId, { type: event.streamType, positions: [event.position] });
  }
  return createInMemoryEventStore({ projectors: hostProjectors, log });
}

describe('golden logs', () => {
  it('has the recorded logs', () => {
    expect(logs).toEqual(expect.arrayContaining(['demo', 'run-flow']));
  });

  for (const name of logs) {
    it(`${name}: today's code reads the log, the machines accept it, the projections are the recorded ones`, async () => {
      const events = readLog(name);
      expect(events.length).toBeGreaterThan(10);
      expect(events.map((e) => e.position)).toEqual(events.map((_, i) => i + 1));
      const store = replay(events);
      const read: RecordedEvent[] = [];
      for await (const event of store.iterate()) read.push(event);
      expect(read).toHaveLength(events.length);
      const report = await verifyLog(store.iterate());
      expect(report.violations).toEqual([]);
      expect(report.ok).toBe(true);
      const projections = JSON.parse(JSON.stringify(await dumpProjections(store)));
      const snapshot = join(golden, `${name}.projections.json`);
      if (process.env.GOLDEN_UPDATE === '1' || !existsSync(snapshot)) {
        if (process.env.CI) throw new Error(`no projection snapshot ${snapshot}: run scripts/record-golden.mjs`);
        writeFileSync(snapshot, `${JSON.stringify(projections, null, 2)}\n`);
      }
      expect(projections).toEqual(JSON.parse(readFileSync(snapshot, 'utf8')));
      await store.close();
    });
  }
});
