import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { storePath } from '@demiurge/host';

/** One step of a fake provider script (`provider.fake_script`). */
export interface FakeStep {
  readonly content?: string;
  readonly tool_calls?: readonly { name: string; arguments: Record<string, unknown> }[];
}

/** The keys of `<home>/config.yaml` the crash tests set. */
export interface HomeConfig {
  readonly script: readonly FakeStep[];
  readonly webhookUrl?: string;
  readonly pollMs?: number;
  readonly runLeaseMs?: number;
  /** `leases.work_ms`: the lease of durable work claims (deliveries, completion notices, schedule fires). */
  readonly workLeaseMs?: number;
  /** The scheduler on, ticking every `tickMs` (off by default). */
  readonly scheduler?: { readonly tickMs: number };
  /** An Agent Core directory instead of the bundled one. */
  readonly core?: string;
}

/** A home: its directory, its workspace (the host's working directory), its store file. */
export interface Home {
  readonly dir: string;
  readonly workspace: string;
  readonly db: string;
}

/** Creates the home layout and writes `config.yaml` and the fake script (`script.json`). */
export function writeHome(dir: string, config: HomeConfig): Home {
  const workspace = join(dir, 'ws');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(join(dir, 'runtime'), { recursive: true, mode: 0o700 });
  writeScript(dir, config.script);
  const lines = [
    'provider:',
    '  name: fake',
    '  fake_script: script.json',
    // `serve` passes its working directory as the workspace over this key; the tests start it in `ws` too.
    `workspace: ${workspace}`,
    'scheduler:',
    ...(config.scheduler ? ['  enabled: true', `  tick_ms: ${config.scheduler.tickMs}`] : ['  enabled: false']),
    'delivery:',
    `  poll_ms: ${config.pollMs ?? 50}`,
    ...(config.webhookUrl ? ['  webhook:', `    url: ${config.webhookUrl}`, '    timeout_ms: 5000'] : []),
    ...(config.runLeaseMs || config.workLeaseMs ? ['leases:'] : []),
    ...(config.runLeaseMs ? [`  run_ms: ${config.runLeaseMs}`] : []),
    ...(config.workLeaseMs ? [`  work_ms: ${config.workLeaseMs}`] : []),
    ...(config.core ? [`core: ${config.core}`] : []),
  ];
  writeFileSync(join(dir, 'config.yaml'), `${lines.join('\n')}\n`);
  return { dir, workspace, db: storePath(dir) };
}

/** (Re)writes the fake script; a host reads it when it starts. */
export function writeScript(dir: string, script: readonly FakeStep[]): void {
  writeFileSync(join(dir, 'script.json'), JSON.stringify(script, null, 2));
}

/** Seeds `count` webhook-bound sessions (fixtures/seed-webhook-sessions.mjs, while no host serves the home). */
export function seedWebhookSessions(home: string, count: number): Promise<string[]> {
  const script = join(import.meta.dirname, '..', 'fixtures', 'seed-webhook-sessions.mjs');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, home, String(count)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`seed-webhook-sessions exited ${code}: ${stderr}`));
      else resolve((JSON.parse(stdout) as { sessions: string[] }).sessions);
    });
  });
}
