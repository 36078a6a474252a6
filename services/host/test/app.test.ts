import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectOperator, type OperatorEvent, operatorSocketPath } from '@demiurge/operator';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DemiurgeApp, serveGatewaySocket } from '../src/index.js';

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

function script(steps: unknown[]): string {
  const path = join(home, 'script.json');
  writeFileSync(path, JSON.stringify(steps));
  return path;
}

describe('DemiurgeApp', () => {
  it('starts on the embedded store with the fake provider, runs a turn and closes', async () => {
    const app = await DemiurgeApp.start({ home, overrides: { workspace }, env: {} });
    const submitted = await app.submit({ text: 'hello' });
    expect(submitted.runId).toMatch(/^run_/);
    expect(await submitted.outcome).toMatchObject({ status: 'completed', text: '[fake] hello' });
    await app.close();
    await app.close(); // idempotent
    await expect(app.submit({ text: 'late' })).rejects.toThrow(/closing/);
    expect(statSync(join(home, 'runtime')).mode & 0o777).toBe(0o700);
  });

  it('a bad config file fails start with one clear error naming the key', async () => {
    writeFileSync(join(home, 'config.yaml'), 'provider:\n  nmae: fake\n');
    await expect(DemiurgeApp.start({ home, env: {} })).rejects.toThrow(/config\.yaml:2: provider\.nmae: unknown key/);
  });

  it('resumes a run whose owner is gone at start', async () => {
    const first = await DemiurgeApp.start({
      home,
      overrides: {
        workspace,
        fakeScript: script([
          { tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30' } }] },
          { content: 'after restart' },
        ]),
      },
      env: {},
    });
    const submitted = await first.submit({ text: 'go' });
    await firstValueFrom(first.store.events$.pipe(filter((e) => e.type === 'tool_call.started')));
    await first.close(); // releases the run for the next host
    expect((await submitted.outcome).status).toBe('interrupted');
    const second = await DemiurgeApp.start({
      home,
      overrides: { workspace, fakeScript: join(home, 'script.json') },
      env: {},
    });
    try {
      for (let i = 0; i < 100 && (await second.liveRuns()).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await second.liveRuns()).toEqual([]);
      const run = await second.runtime.runs.get(submitted.runId);
      expect(run.state).toBe('completed');
    } finally {
      await second.close();
    }
  });
});

describe('the operator gateway on the host', () => {
  it('serves the socket 0600, runs a submitted turn, pushes its messages; a disconnect never cancels the run', async () => {
    const app = await DemiurgeApp.start({ home, overrides: { workspace }, env: {} });
    const server = await serveGatewaySocket(app);
    try {
      expect(statSync(operatorSocketPath(home)).mode & 0o777).toBe(0o600);
      const client = await connectOperator(operatorSocketPath(home));
      await client.request('operator.initialize', { protocol_version: 1, client: { name: 'test', version: '1' } });
      const messages = firstValueFrom(
        client.events$.pipe(
          filter((e: OperatorEvent) => e.event === 'operator.message'),
          take(2),
          toArray(),
        ),
      );
      const result = await client.request('operator.submit', { text: 'hi there' });
      expect(result.session_id).toMatch(/^ses_/);
      expect((await messages).map((e) => (e.payload as { text: string }).text)).toEqual([
        'hi there',
        '[fake] hi there',
      ]);
      const history = await client.request('operator.history', { session_id: result.session_id });
      expect(history.messages).toHaveLength(2);

      await client.close();
    } finally {
      await server.close();
      await app.close();
    }
  });

  it('a client disconnect mid-turn never cancels the run', async () => {
    const fakeScript = script([
      { tool_calls: [{ name: 'shell', arguments: { command: 'sleep 0.5' } }] },
      { content: 'slow done' },
    ]);
    const app = await DemiurgeApp.start({ home, overrides: { workspace, fakeScript }, env: {} });
    const server = await serveGatewaySocket(app);
    try {
      const client = await connectOperator(operatorSocketPath(home));
      await client.request('operator.initialize', { protocol_version: 1, client: { name: 'test', version: '1' } });
      const { run_id } = await client.request('operator.submit', { text: 'slow work' });
      await client.close();
      await firstValueFrom(app.store.events$.pipe(filter((e) => e.streamId === run_id && e.type === 'run.completed')));
      expect((await app.runtime.runs.get(run_id)).state).toBe('completed');
    } finally {
      await server.close();
      await app.close();
    }
  });
});
