import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { demiurge } from './cli.js';

/**
 * Records a home's event log as the golden log `test/golden/<name>.jsonl` when `DEMIURGE_GOLDEN_RECORD=1`
 * (`node scripts/record-golden.mjs` sets it); does nothing otherwise. The golden suite (test/e2e
 * `src/golden.test.ts`) replays these logs through today's code: see test/golden/README.md.
 */
export async function recordGolden(name: string, home: string): Promise<void> {
  if (process.env.DEMIURGE_GOLDEN_RECORD !== '1') return;
  const log = await demiurge(['events', '--json', '--home', home]);
  if (log.code !== 0) throw new Error(`demiurge events --home ${home} exited ${log.code}: ${log.stderr}`);
  writeFileSync(join(resolve(import.meta.dirname, '..', '..', 'golden'), `${name}.jsonl`), log.stdout);
}
