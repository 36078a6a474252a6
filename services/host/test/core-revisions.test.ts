import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RuntimeControlPlane } from '@demiurge/control-plane';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CORE_DIR, DemiurgeApp, hostTaskKinds, readCoreFiles, UnhandledTaskKindError } from '../src/index.js';

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

describe('task kinds a host runs', () => {
  it('accepts the kinds it has a handler for (and schedule.fire); refuses another ledger kind, naming it', () => {
    const kinds = hostTaskKinds(() => ['terminal.exec']);
    expect(kinds.kinds).toEqual(['terminal.exec', 'schedule.fire']);
    expect(kinds.has('evolver.run')).toBe(false);
    expect(() => kinds.schema('evolver.run')).toThrow(UnhandledTaskKindError);
    expect(() => kinds.schema('evolver.run')).toThrow(
      'this host has no handler for task kind "evolver.run", so a task of it would never start; the kinds it runs: terminal.exec, schedule.fire. Nothing was submitted',
    );
    expect(() => kinds.schema('tool.call')).toThrow('"tool.call" is not a task kind');
  });

  it('a control plane on those kinds refuses an unhandled kind at submit and appends nothing', async () => {
    const app = await DemiurgeApp.start({ home, overrides: { workspace }, env: {}, background: false });
    try {
      expect(app.runtime.controlPlane.kinds.kinds).toEqual(
        expect.arrayContaining(['terminal.exec', 'agent.spawn', 'evolver.run', 'schedule.fire']),
      );
      const session = await app.runtime.sessions.create({ title: 't', coreId: 'default' });
      const narrow = new RuntimeControlPlane({
        store: app.store,
        clock: app.clock,
        ids: app.ids,
        work: app.runtime.work,
        kinds: hostTaskKinds(() => ['terminal.exec']),
      });
      const head = await app.store.head();
      await expect(
        narrow.submitTask({ sessionId: session.sessionId, kind: 'evolver.run', title: 'x', input: { goal: 'g' } }),
      ).rejects.toBeInstanceOf(UnhandledTaskKindError);
      expect(await app.store.head()).toBe(head);
    } finally {
      await app.close();
    }
  });
});

describe('turns pinned to a core revision', () => {
  it('a turn records the current revision; a new one is picked up at the next admission', async () => {
    const core = join(home, 'core');
    cpSync(DEFAULT_CORE_DIR, core, { recursive: true });
    const app = await DemiurgeApp.start({ home, overrides: { workspace, core }, env: {}, background: false });
    try {
      const first = await app.submit({ text: 'one' });
      await first.outcome;
      const { entry } = await app.coreSource.revisions.record({
        files: await readCoreFiles(core),
        message: 'first',
        reason: 'save',
        actor: { kind: 'user', id: 'test' },
      });
      const second = await app.submit({ text: 'two' });
      await second.outcome;
      const pins = (await app.store.readAll({ types: ['turn.started'] })).map(
        (e) => (e.data as { core?: { revision?: string; tools: string[] } }).core,
      );
      expect(pins[0]?.revision).toBeUndefined();
      expect(pins[1]?.revision).toBe(entry.revision);
      expect(pins[1]?.tools).toContain('evolve_core');
      expect(await app.coreSource.status()).toEqual({ id: 'default', revision: entry.revision, number: 1 });
    } finally {
      await app.close();
    }
  });
});
