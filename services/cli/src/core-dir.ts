import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What is wrong with an Agent Core directory, or `null` when it looks usable: it exists and has an
 * `agent.yaml`. TODO: call the host's core check (loading agent.yaml and its pipelines) once
 * @demiurge/host exports one.
 */
export function coreProblem(dir: string): string | null {
  if (!existsSync(dir)) return `${dir} does not exist`;
  if (!statSync(dir).isDirectory()) return `${dir} is not a directory`;
  if (!existsSync(join(dir, 'agent.yaml'))) return `${dir} has no agent.yaml`;
  return null;
}
