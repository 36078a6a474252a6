import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What is wrong with an Agent Core directory before it is loaded, or `null` when it is worth loading: it
 * exists and has an `agent.yaml` (`doctor` then loads it with the host's `loadCore`).
 */
export function coreProblem(dir: string): string | null {
  if (!existsSync(dir)) return `${dir} does not exist`;
  if (!statSync(dir).isDirectory()) return `${dir} is not a directory`;
  if (!existsSync(join(dir, 'agent.yaml'))) return `${dir} has no agent.yaml`;
  return null;
}

/** The core's id from its agent.yaml, read leniently (a core whose check fails still has one); undefined: none. */
export function readCoreId(dir: string): string | undefined {
  const file = join(dir, 'agent.yaml');
  if (!existsSync(file)) return undefined;
  return /^id:\s*["']?([A-Za-z0-9_.-]+)["']?\s*(#.*)?$/m.exec(readFileSync(file, 'utf8'))?.[1];
}
