import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeStep } from '@demiurge/cli';

// A home for a real host: the layout and config.yaml the sweep writes, shared with the crash suites.
export { type FakeStep, type Home, type HomeConfig, writeHome } from '@demiurge/cli';

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
