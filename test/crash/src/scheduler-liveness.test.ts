import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CORE_DIR } from '@demiurge/host';
import { afterEach, describe, expect, it } from 'vitest';
import { sleep, tempDir, until } from './cli.js';
import type { LogRow } from './log-reader.js';
import { ServedHome } from './served-home.js';
import { verifyHome } from './store-checks.js';

let served: ServedHome | undefined;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  await served?.dispose();
  served = undefined;
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A shell command that runs until the test creates `go` in the workspace (its working directory). */
const UNTIL_GO = 'while [ ! -f go ]; do sleep 0.05; done';
const EVERY_S = 2;
/** How long the first fire's turn is held (its shell call waits for `go`). */
const HOLD_MS = 7_000;
/** A due time counts as on time when it is enqueued within this of it (ticks every 200 ms; a loaded CI machine). */
const ON_TIME_MS = 3_000;

const writePulse = (core: string, enabled: boolean) =>
  writeFileSync(
    join(core, 'schedules', 'pulse.yaml'),
    `cron: "*/${EVERY_S} * * * * *"\nprompt: the pulse\nenabled: ${enabled}\n`,
  );

const fireItems = (rows: LogRow[]) => rows.filter((e) => e.data.kind === 'schedule.fire');
const dueOf = (e: LogRow) => (e.data.payload as { dueAt: string }).dueAt;

// A host used to tick its schedules and run their fires in one loop round: while a fire's turn ran, the host did
// not tick, so the next due times were first seen only after the turn (on one host, a turn longer than a minute
// made them `missed`: coalesced or skipped by the policy, never fired). Ticks now have a loop of their own.
describe('a long scheduled turn does not hold up its host’s ticks (issue 17)', () => {
  it('while a fire’s turn runs a long tool call, the next due times are enqueued on time, then each fires once', async () => {
    const coreDir = tempDir('demiurge-liveness-core-');
    cleanups.push(coreDir.remove);
    cpSync(DEFAULT_CORE_DIR, coreDir.path, { recursive: true });
    mkdirSync(join(coreDir.path, 'schedules'), { recursive: true });
    writePulse(coreDir.path, true);
    served = await ServedHome.start({
      core: coreDir.path,
      // Every fire's session plays this from its first step: a shell call that waits for `go`, then an echo.
      script: [{ content: 'Working on the pulse.', tool_calls: [{ name: 'shell', arguments: { command: UNTIL_GO } }] }],
      scheduler: { tickMs: 200 },
    });
    const reader = served.reader;
    // The first fire's shell call runs (its process started): its turn is held until `go`.
    const call = await reader.waitFor('the first fire’s shell call', (e) => e.type === 'tool_call.process_started', {
      timeoutMs: 30_000,
    });
    const held = Date.now();
    const seen = new Map<string, number>(); // due time → when the test first saw its fire enqueued
    while (Date.now() - held < HOLD_MS) {
      for (const e of fireItems(reader.events(1, 'work.enqueued')))
        if (!seen.has(dueOf(e))) seen.set(dueOf(e), Date.now());
      await sleep(100);
    }
    const stillRunning = reader.stream(call.streamId).at(-1)?.type;
    writeFileSync(join(served.home.workspace, 'go'), '');
    // The due times that came while the turn was held, and when each was enqueued (relative to it).
    const dueWhileHeld: string[] = [];
    for (let t = Math.ceil((held + 1) / (EVERY_S * 1000)) * EVERY_S * 1000; t <= held + HOLD_MS - ON_TIME_MS; ) {
      dueWhileHeld.push(new Date(t).toISOString());
      t += EVERY_S * 1000;
    }
    const late = dueWhileHeld.flatMap((d) => {
      const at = seen.get(d);
      if (at !== undefined && at - Date.parse(d) <= ON_TIME_MS) return [];
      return [
        `${d}: ${at === undefined ? 'not enqueued while the turn ran' : `enqueued ${at - Date.parse(d)} ms after`}`,
      ];
    });
    console.log(
      `due while the fire's turn was held: ${dueWhileHeld.map((d) => `${d.slice(11, 19)} +${(seen.get(d) ?? Number.NaN) - Date.parse(d)} ms`).join(', ')}`,
    );
    expect(stillRunning).toBe('tool_call.process_started');
    expect(dueWhileHeld.length).toBeGreaterThanOrEqual(2);
    expect(late).toEqual([]);

    // The window closes; every fire enqueued runs once (its task started once) and settles.
    writePulse(coreDir.path, false);
    await until(
      'every scheduled fire to settle',
      () => {
        const enqueued = fireItems(reader.events(1, 'work.enqueued')).map((e) => e.streamId);
        const open = enqueued.filter((id) => !/work\.(succeeded|failed)/.test(served!.types(id).join(' ')));
        const closed = reader
          .events(1, 'schedule_instance.failed')
          .some((e) => (e.data.error as { code: string }).code === 'schedule_disabled');
        return closed && open.length === 0 ? enqueued : undefined;
      },
      60_000,
    );
    const items = fireItems(reader.events(1, 'work.enqueued'));
    const dues = items.map(dueOf);
    expect(new Set(dues).size).toBe(dues.length);
    for (const d of dueWhileHeld) expect(dues).toContain(d);
    const outcomes = items.map((e) => `${dueOf(e)} ${served!.types(e.streamId).at(-1)}`);
    expect(outcomes.filter((o) => !o.endsWith('work.succeeded'))).toEqual([]);
    const fireTasks = reader.events(1, 'task.submitted').filter((e) => e.data.kind === 'schedule.fire');
    expect(fireTasks.map((t) => (t.data.input as { dueAt: string }).dueAt).sort()).toEqual([...dues].sort());
    for (const t of fireTasks) expect(served.types(t.streamId).filter((x) => x === 'task.started')).toHaveLength(1);
    const verify = await verifyHome(served.home.dir);
    expect(verify.problems).toEqual([]);
    expect(verify.ok).toBe(true);
  });
});
