import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIdGenerator, systemClock } from '@demiurge/contracts';
import { RunRuntime } from '@demiurge/sessions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, DemiurgeApp } from '../src/index.js';

let home: string;
let workspace: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'demiurge-host-'));
  workspace = mkdtempSync(join(tmpdir(), 'demiurge-ws-'));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

describe('one logger port', () => {
  it("the turn engine's reports go through the host's logger: a run taken over mid-call is one JSON record with its error", async () => {
    const fakeScript = join(home, 'script.json');
    writeFileSync(
      fakeScript,
      JSON.stringify([{ tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30' } }] }, { content: 'never' }]),
    );
    writeFileSync(join(home, 'config.yaml'), 'leases:\n  run_ms: 3000\n'); // a heartbeat every second
    const lines: string[] = [];
    const logger = createLogger({ format: 'json', level: 'info', write: (line) => lines.push(line) });
    const app = await DemiurgeApp.start({ home, overrides: { workspace, fakeScript }, env: {}, logger });
    try {
      const other = new RunRuntime({
        store: app.store,
        clock: systemClock,
        ids: createIdGenerator(systemClock),
        owner: 'other-host',
      });
      const sub = app.store.events$.subscribe((event) => {
        // Another host takes the run over (it judged this owner dead) while the call runs.
        if (event.type === 'tool_call.process_started')
          void other.claimOwnership(event.meta.runId!, { ownerDead: true });
      });
      const submitted = await app.submit({ text: 'go', newSession: true });
      await submitted.outcome.catch(() => undefined);
      sub.unsubscribe();
      const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const report = records.find((r) => typeof r.msg === 'string' && /heartbeat failed/.test(r.msg));
      expect(report).toMatchObject({
        level: 'warn',
        runId: submitted.runId,
        error: { message: expect.stringMatching(/^stale lease on run run_\w+: other-host owns it now/) },
      });
      expect(Number.isNaN(Date.parse(String(report?.time)))).toBe(false);
    } finally {
      await app.close();
    }
  }, 30_000);
});
