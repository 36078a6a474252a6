import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CORE_DIR } from '@demiurge/host';

/** The environment variable the slow slot reads: how long it holds the answer back (ms). */
export const SLOW_OUTPUT_ENV = 'CRASH_SLOW_OUTPUT_MS';

/**
 * A copy of the bundled Agent Core with one more serial output slot, `slow_output`, before `base_output`:
 * it waits `CRASH_SLOW_OUTPUT_MS` (host environment) before the answer is sent, which holds a turn between
 * its final model round being recorded and its completion — a moment a test can kill the host in.
 */
export function writeSlowCore(dir: string): string {
  cpSync(DEFAULT_CORE_DIR, dir, { recursive: true });
  const slot = join(dir, 'output', 'slow_output');
  mkdirSync(slot, { recursive: true });
  writeFileSync(
    join(slot, 'slot.yaml'),
    [
      'entrypoint: module.mjs',
      'description: Holds the answer back for a while (crash tests).',
      'timeout_seconds: 20',
      'failure_policy: hard',
      'history_policy: transient',
      'capabilities: []',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(slot, 'module.mjs'),
    `export default async function slowOutput() {\n  const ms = Number(process.env.${SLOW_OUTPUT_ENV} ?? 0);\n  await new Promise((resolve) => setTimeout(resolve, ms));\n}\n`,
  );
  const pipelines = join(dir, 'pipelines.yaml');
  const text = readFileSync(pipelines, 'utf8');
  const slowed = text.replace(/^( {2}serial: \[)(base_output)/m, '$1slow_output, $2');
  if (slowed === text) throw new Error(`cannot find the output serial list in ${pipelines}`);
  writeFileSync(pipelines, slowed);
  return dir;
}
