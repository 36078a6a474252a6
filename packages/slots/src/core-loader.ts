import { createHash } from 'node:crypto';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { extname, join, relative, resolve } from 'node:path';
import { SlotPhase } from '@demiurge/contracts';
import type { AgentCore, McpServerSpec, SlotMode, SlotSpec } from './agent-core.js';
import { AgentFile, MODULE_EXTENSIONS, PipelinesFile, SLOT_ID_PATTERN, SlotFile } from './core-schema.js';
import { CoreLoadError } from './errors.js';
import { McpFile } from './mcp-schema.js';
import { escapes, isInside } from './paths.js';
import { parseYamlFile, readYamlFile, type YamlFile } from './yaml-file.js';

/** One slot id as `pipelines.yaml` lists it. */
interface SlotRef {
  readonly id: string;
  readonly phase: SlotPhase;
  readonly mode: SlotMode;
  readonly path: readonly [SlotPhase, SlotMode, number];
}

const PHASES = SlotPhase.options;

/**
 * Loads an Agent Core from a directory (any directory can be a core): `agent.yaml`, `pipelines.yaml`, and
 * the `slot.yaml` of every slot the pipelines list, each in its typed folder `<phase>/<slot_id>/`. Every
 * problem is a {@link CoreLoadError} naming the file and, where the YAML has one, the line. Folders the
 * pipelines do not list are not loaded (their names must still be plain and unique); folders starting with
 * `.` or `_` are never slots.
 *
 * @example
 * ```ts
 * const core = await loadCore('agent');
 * core.pipelines.input.serial; // ['base_input']
 * core.slots.get('base_input')?.entrypoint; // '/repo/agent/input/base_input/module.ts'
 * ```
 */
export async function loadCore(dir: string): Promise<AgentCore> {
  const given = resolve(dir);
  const root = await coreRoot(given);
  const agentYaml = await readRequired(join(given, 'agent.yaml'), 'every core has one (id, name, instructions)');
  const agent = parseYamlFile(agentYaml, AgentFile);
  const pipelinesYaml = await readRequired(join(given, 'pipelines.yaml'), 'it lists the slots of each phase');
  refuseBootstrapParallel(pipelinesYaml);
  const pipelines = parseYamlFile(pipelinesYaml, PipelinesFile);
  const refs = slotRefs(pipelinesYaml, pipelines);
  const folders = await slotFolders(given);
  const slots = new Map<string, SlotSpec>();
  const hashed: [string, string][] = [
    ['agent.yaml', agentYaml.text],
    ['pipelines.yaml', pipelinesYaml.text],
  ];
  for (const ref of refs) {
    const phases = folders.get(ref.id) ?? [];
    if (phases.length === 0) {
      throw pipelinesYaml.error(
        ref.path,
        `unknown slot id "${ref.id}": there is no folder ${ref.phase}/${ref.id}/ in the core ${given}`,
      );
    }
    if (!phases.includes(ref.phase)) {
      throw pipelinesYaml.error(
        ref.path,
        `slot "${ref.id}" is listed under ${ref.phase} but its folder is ${phases[0]}/${ref.id}/; ` +
          `move the folder to ${ref.phase}/${ref.id}/ or list the slot under ${phases[0]}`,
      );
    }
    const { spec, files } = await loadSlot(given, root, ref, pipelinesYaml.lineOf(ref.path));
    slots.set(ref.id, spec);
    hashed.push(...files);
  }
  const mcp = await loadMcpServers(given, root);
  if (mcp) hashed.push(['mcp.yaml', mcp.text]);
  const revision = createHash('sha256');
  for (const [name, text] of hashed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    revision.update(name).update('\0').update(text).update('\0');
  }
  return {
    dir: root,
    id: agent.id,
    name: agent.name,
    description: agent.description,
    provider: agent.provider,
    model: agent.model,
    instructions: agent.instructions,
    limits: { stepBudget: agent.limits.step_budget, maxDelegationDepth: agent.limits.max_delegation_depth },
    pipelines,
    slots,
    mcpServers: mcp?.servers ?? [],
    revision: revision.digest('hex'),
  };
}

/** `mcp.yaml` (optional): the core's MCP servers, validated like the other core files; undefined without one. */
async function loadMcpServers(
  given: string,
  root: string,
): Promise<{ text: string; servers: McpServerSpec[] } | undefined> {
  const file = join(given, 'mcp.yaml');
  if (!(await isFile(file))) return undefined;
  const yaml = await readYamlFile(file);
  const parsed = parseYamlFile(yaml, McpFile);
  const servers = Object.entries(parsed.servers).map(([name, entry]): McpServerSpec => {
    const common = {
      name,
      startupTimeoutMs: Math.round(entry.startup_timeout_seconds * 1000),
      maxRestarts: entry.max_restarts,
    };
    if (entry.url !== undefined) return { ...common, transport: 'http', url: entry.url, headers: entry.headers };
    return {
      ...common,
      transport: 'stdio',
      command: entry.command!,
      args: entry.args,
      env: entry.env,
      cwd: resolve(root, entry.cwd ?? '.'),
    };
  });
  return { text: yaml.text, servers };
}

async function coreRoot(given: string): Promise<string> {
  try {
    const root = await realpath(given);
    if ((await stat(root)).isDirectory()) return root;
  } catch (err) {
    throw new CoreLoadError(given, 'the core directory does not exist', undefined, [], { cause: err });
  }
  throw new CoreLoadError(given, 'a core is a directory, not a file');
}

async function readRequired(file: string, why: string): Promise<YamlFile> {
  if (!(await isFile(file))) throw new CoreLoadError(file, `missing file: ${why}`);
  return readYamlFile(file);
}

function refuseBootstrapParallel(yaml: YamlFile): void {
  const bootstrap = (yaml.value as { bootstrap?: unknown } | null)?.bootstrap;
  if (bootstrap !== null && typeof bootstrap === 'object' && 'parallel' in bootstrap) {
    throw yaml.error(
      ['bootstrap'],
      'bootstrap has no parallel lane: bootstrap slots run once per session, in order (use bootstrap.serial)',
      'parallel',
    );
  }
}

/** The slot ids in pipeline order; an id listed twice, or in two phases, is refused. */
function slotRefs(yaml: YamlFile, pipelines: PipelinesFile): SlotRef[] {
  const lanes: [SlotPhase, SlotMode, readonly string[]][] = [
    ['bootstrap', 'serial', pipelines.bootstrap.serial],
    ['input', 'serial', pipelines.input.serial],
    ['input', 'parallel', pipelines.input.parallel],
    ['output', 'serial', pipelines.output.serial],
    ['output', 'parallel', pipelines.output.parallel],
  ];
  const seen = new Map<string, SlotRef>();
  const refs: SlotRef[] = [];
  for (const [phase, mode, ids] of lanes) {
    ids.forEach((id, index) => {
      const ref: SlotRef = { id, phase, mode, path: [phase, mode, index] };
      const first = seen.get(id);
      if (first && first.phase === phase) {
        throw yaml.error(
          ref.path,
          `duplicate slot id "${id}": already listed as ${first.path.slice(0, 2).join('.')}[${first.path[2]}] ` +
            `(line ${yaml.lineOf(first.path)}); a slot runs once per phase`,
        );
      }
      if (first) {
        throw yaml.error(
          ref.path,
          `slot "${id}" is listed in both ${first.phase} (line ${yaml.lineOf(first.path)}) and ${phase}; ` +
            'a slot belongs to one phase, the one its folder is in',
        );
      }
      seen.set(id, ref);
      refs.push(ref);
    });
  }
  return refs;
}

/** Slot folders by id → the phases they are in; badly named folders and ids in two phases are refused. */
async function slotFolders(given: string): Promise<Map<string, SlotPhase[]>> {
  const folders = new Map<string, SlotPhase[]>();
  for (const phase of PHASES) {
    const phaseDir = join(given, phase);
    let names: string[];
    try {
      names = (await readdir(phaseDir)).sort();
    } catch {
      continue; // no folder for this phase: no slots in it
    }
    for (const name of names) {
      if (name.startsWith('.') || name.startsWith('_') || !(await isDirectory(join(phaseDir, name)))) continue;
      if (!SLOT_ID_PATTERN.test(name)) {
        throw new CoreLoadError(
          join(phaseDir, name),
          `slot folder "${name}" is not a plain slot id (lower-case letters, digits and _); ` +
            'rename it, or start its name with _ to keep helper files there',
        );
      }
      const phases = folders.get(name) ?? [];
      if (phases.length > 0) {
        throw new CoreLoadError(
          join(phaseDir, name),
          `duplicate slot id "${name}": there is also a folder ${phases[0]}/${name}/; slot ids are unique in a core`,
        );
      }
      folders.set(name, [...phases, phase]);
    }
  }
  return folders;
}

async function loadSlot(
  given: string,
  root: string,
  ref: SlotRef,
  listedAt: number | undefined,
): Promise<{ spec: SlotSpec; files: [string, string][] }> {
  const slotDir = join(given, ref.phase, ref.id);
  const manifestPath = join(slotDir, 'slot.yaml');
  if (!(await isFile(manifestPath))) {
    throw new CoreLoadError(
      manifestPath,
      `missing slot.yaml: slot "${ref.id}" is listed in pipelines.yaml (line ${listedAt}) and needs a manifest`,
    );
  }
  const yaml = await readYamlFile(manifestPath);
  const manifest = parseYamlFile(yaml, SlotFile, yaml.value ?? {});
  const fail = (detail: string) => yaml.error([], detail, 'entrypoint');
  const target = resolve(slotDir, manifest.entrypoint);
  if (escapes(given, target)) {
    throw fail(`entrypoint "${manifest.entrypoint}" resolves to ${target}, outside the core directory ${given}`);
  }
  if (!(MODULE_EXTENSIONS as readonly string[]).includes(extname(target))) {
    throw fail(`entrypoint "${manifest.entrypoint}" must be a ${MODULE_EXTENSIONS.join(', ')} module`);
  }
  if (!(await isFile(target))) {
    throw fail(`missing module: entrypoint "${manifest.entrypoint}" (${target}) does not exist`);
  }
  const entrypoint = await realpath(target);
  if (!isInside(root, entrypoint)) {
    throw fail(`entrypoint "${manifest.entrypoint}" is a symlink to ${entrypoint}, outside the core directory ${root}`);
  }
  const spec: SlotSpec = {
    id: ref.id,
    phase: ref.phase,
    mode: ref.mode,
    dir: await realpath(slotDir),
    manifestPath,
    entrypoint,
    description: manifest.description,
    timeoutSeconds: manifest.timeout_seconds,
    failurePolicy: manifest.failure_policy,
    historyPolicy: manifest.history_policy,
    capabilities: manifest.capabilities,
  };
  const files: [string, string][] = [
    [relative(given, manifestPath), yaml.text],
    [relative(root, entrypoint), await readFile(entrypoint, 'utf8')],
  ];
  return { spec, files };
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
