import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedEvent } from '@demiurge/contracts';
import { createInMemoryEventStore, createInMemoryLog, dumpProjections } from '@demiurge/event-store';
import { hostProjectors } from '@demiurge/host';
import { type VerifyReport, verifyLog } from '@demiurge/lifecycle';
import { describe, expect, it } from 'vitest';
import { goldenDir as golden } from './golden-record.js';

/**
 * Golden logs: event logs recorded from an older build (`scripts/record-golden.mjs`: the demo, scenarios of
 * the crash suite and of this end-to-end suite), replayed through today's code — the event registry (schemas
 * and upcasters), the lifecycle machines (`verifyLog`) and every projector of the host — and compared with
 * the projections recorded beside them. A change that alters what an old log means (a schema that no longer
 * reads it, a machine that refuses it, a projector that builds something else from it) fails here; re-record
 * only when that change is intended (test/golden/README.md).
 */
const logs = readdirSync(golden)
  .filter((f) => f.endsWith('.jsonl'))
  .map((f) => f.slice(0, -'.jsonl'.length));

/** The logs scripts/record-golden.mjs records: a missing one is a lost golden, not a smaller suite. */
const RECORDED = [
  'demo',
  'run-flow',
  'crash-run-recovery',
  'crash-run-takeover',
  'crash-cancel',
  'crash-completion-turn',
  'crash-delivery-unknown',
  'crash-schedule-fire',
  'e2e-approval-granted',
  'e2e-approval-denied',
  'e2e-delegation',
  'e2e-task-admin',
  'e2e-completion-notice',
  'e2e-gateway-submit',
];

function readLog(name: string): RecordedEvent[] {
  return readFileSync(join(golden, `${name}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RecordedEvent);
}

const readSnapshot = (name: string): unknown =>
  JSON.parse(readFileSync(join(golden, `${name}.projections.json`), 'utf8'));

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

/** Today's reading of a log: every event read back, the machines' verdict, every projection. */
async function readToday(events: readonly RecordedEvent[]): Promise<{
  read: number;
  report: VerifyReport;
  projections: unknown;
}> {
  const store = replay(events);
  try {
    let read = 0;
    for await (const _ of store.iterate()) read++;
    const report = await verifyLog(store.iterate(), { fencing: true });
    return { read, report, projections: JSON.parse(JSON.stringify(await dumpProjections(store))) };
  } finally {
    await store.close();
  }
}

/** The log with one event's type and data replaced (the meaning of one recorded event altered). */
function alter(events: readonly RecordedEvent[], position: number, type: string, data: unknown): RecordedEvent[] {
  return events.map((e) => (e.position === position ? ({ ...e, type, data } as RecordedEvent) : e));
}

describe('golden logs', () => {
  it('has the recorded logs: the demo, the crash-suite and the end-to-end scenarios', () => {
    expect([...logs].sort()).toEqual([...RECORDED].sort());
  });

  for (const name of logs) {
    it(`${name}: today's code reads the log, the machines accept it, the projections are the recorded ones`, async () => {
      const events = readLog(name);
      expect(events.length).toBeGreaterThan(10);
      expect(events.length).toBeLessThan(1_000); // small: hundreds of events, not tens of thousands
      expect(events.map((e) => e.position)).toEqual(events.map((_, i) => i + 1));
      const today = await readToday(events);
      expect(today.read).toBe(events.length);
      expect(today.report.violations).toEqual([]);
      expect(today.report.ok).toBe(true);
      const snapshot = join(golden, `${name}.projections.json`);
      if (process.env.GOLDEN_UPDATE === '1' || !existsSync(snapshot)) {
        if (process.env.CI) throw new Error(`no projection snapshot ${snapshot}: run scripts/record-golden.mjs`);
        writeFileSync(snapshot, `${JSON.stringify(today.projections, null, 2)}\n`);
      }
      expect(today.projections).toEqual(readSnapshot(name));
    });
  }
});

describe('the golden comparison sees a change of meaning', () => {
  const events = readLog('crash-cancel');
  const cancelled = events.find((e) => e.type === 'task.cancelled')!;
  const started = events.find((e) => e.type === 'task.started' && e.streamId === cancelled.streamId)!;

  it('a cancelled task read as completed: the machines accept the log, the snapshot comparison fails', async () => {
    const data = { taskId: cancelled.streamId, summary: 'done' };
    const today = await readToday(alter(events, cancelled.position, 'task.completed', data));
    expect(today.report.violations).toEqual([]);
    expect(today.projections).not.toEqual(readSnapshot('crash-cancel'));
    // The unaltered log still matches: it is the one event that made the difference.
    expect((await readToday(events)).projections).toEqual(readSnapshot('crash-cancel'));
  });

  it('a task completed before it started: the machines refuse the log', async () => {
    const data = { taskId: started.streamId, summary: 'done' };
    const today = await readToday(alter(events, started.position, 'task.completed', data));
    expect(today.report.ok).toBe(false);
    expect(today.report.violations).toEqual(
      expect.arrayContaining([expect.objectContaining({ streamId: started.streamId })]),
    );
  });
});
