import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AgentCore } from '../agent-core.js';

/** A slot of a core and its version: the sha-256 (first 16 digits) of its `slot.yaml` and its module. */
export interface SlotVersion {
  readonly id: string;
  readonly phase: string;
  readonly version: string;
}

/**
 * The versions of every slot a loaded core runs, in pipeline order (recorded in a turn's pin, see
 * `TurnCoreCapabilities` in @demiurge/contracts).
 */
export async function slotVersions(core: AgentCore): Promise<SlotVersion[]> {
  const out: SlotVersion[] = [];
  for (const spec of core.slots.values()) {
    const hash = createHash('sha256');
    hash
      .update(await readFile(spec.manifestPath))
      .update('\0')
      .update(await readFile(spec.entrypoint));
    out.push({ id: spec.id, phase: spec.phase, version: hash.digest('hex').slice(0, 16) });
  }
  return out;
}
