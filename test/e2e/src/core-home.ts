import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type CliResult, demiurge, tempHome } from './cli.js';

const require = createRequire(import.meta.url);
/** The bundled default Agent Core (`agent/` at the repository root). */
export const bundledCore = join(dirname(require.resolve('@demiurge/cli/package.json')), '..', '..', 'agent');

/**
 * Fake provider steps of the evolve scenarios, each conversation matched by its goal: `add a shout slot` (a
 * serial output slot that upper-cases the answer), `add a tag slot` (an input slot), `break a slot` (a module
 * that does not compile); and `slow` for a main conversation whose first turn runs `sleep 3` in the shell.
 */
export const EVOLVE_SCRIPT = [
  {
    match: 'add a shout slot',
    tool_calls: [
      {
        name: 'write_file',
        arguments: { path: 'output/shout/slot.yaml', content: 'entrypoint: module.mjs\nfailure_policy: hard\n' },
      },
      {
        name: 'write_file',
        arguments: {
          path: 'output/shout/module.mjs',
          content:
            'export default async function shout(ctx) {\n  ctx.output.set_response_text(ctx.output.response_text.toUpperCase());\n}\n',
        },
      },
      {
        name: 'edit_file',
        arguments: {
          path: 'pipelines.yaml',
          old_text: 'serial: [base_output]',
          new_text: 'serial: [shout, base_output]',
        },
      },
    ],
  },
  { match: 'add a shout slot', content: 'added the shout slot' },
  {
    match: 'add a tag slot',
    tool_calls: [
      { name: 'write_file', arguments: { path: 'input/tag/slot.yaml', content: 'entrypoint: module.mjs\n' } },
      {
        name: 'write_file',
        arguments: { path: 'input/tag/module.mjs', content: 'export default async function tag() {}\n' },
      },
      {
        name: 'edit_file',
        arguments: { path: 'pipelines.yaml', old_text: 'serial: [base_input]', new_text: 'serial: [base_input, tag]' },
      },
    ],
  },
  { match: 'add a tag slot', content: 'added the tag slot' },
  {
    match: 'break a slot',
    tool_calls: [
      { name: 'write_file', arguments: { path: 'output/base_output/module.ts', content: 'export default (ctx {\n' } },
    ],
  },
  { match: 'break a slot', content: 'changed base_output' },
  {
    match: 'slow change',
    tool_calls: [
      { name: 'write_file', arguments: { path: 'input/half/slot.yaml', content: 'entrypoint: module.mjs\n' } },
    ],
  },
  { match: 'slow change', content: 'hold on' },
  { match: 'very slow', tool_calls: [{ name: 'shell', arguments: { command: 'sleep 60' } }] },
  { match: 'slow', tool_calls: [{ name: 'shell', arguments: { command: 'sleep 3' } }] },
  { match: 'slow', content: 'slow done' },
];

/** A home (`<tmp>/home`) with a copy of the bundled core (`<tmp>/core`) configured as its core, on the fake provider. */
export function coreHome(script: readonly unknown[] = EVOLVE_SCRIPT, extra: readonly string[] = []) {
  const tmp = tempHome();
  const home = join(tmp.path, 'home');
  const core = join(tmp.path, 'core');
  const workspace = join(tmp.path, 'ws');
  mkdirSync(home, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  cpSync(bundledCore, core, { recursive: true });
  writeFileSync(join(home, 'script.json'), JSON.stringify(script));
  writeFileSync(
    join(home, 'config.yaml'),
    [
      'provider:',
      '  name: fake',
      '  fake_script: script.json',
      `core: ${core}`,
      `workspace: ${workspace}`,
      'scheduler:',
      '  enabled: false',
      'delivery:',
      '  poll_ms: 50',
      ...extra,
      '',
    ].join('\n'),
  );
  const cli = (...args: string[]): Promise<CliResult> => demiurge([...args, '--home', home]);
  const json = async <T = Record<string, unknown>>(...args: string[]): Promise<T> => {
    const r = await cli(...args, '--json');
    if (r.code !== 0) throw new Error(`demiurge ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  return { tmp: tmp.path, home, core, workspace, cli, json, remove: tmp.remove };
}

/** Every event of the home's log (`events --json` prints one JSON object a line). */
/** An event as `events --json` prints it (its data left loosely typed for the tests' reads). */
export interface LoggedEvent {
  readonly type: string;
  readonly position: number;
  readonly streamId: string;
  // biome-ignore lint/suspicious/noExplicitAny: the tests read fields of many event types
  readonly data: any;
}

export async function eventsOf(home: string): Promise<LoggedEvent[]> {
  const r = await demiurge(['events', '--json', '--home', home]);
  if (r.code !== 0) throw new Error(`events exited ${r.code}: ${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

/** The assistant messages of the log, oldest first. */
export async function assistantTexts(home: string): Promise<string[]> {
  return (await eventsOf(home))
    .filter((e) => e.type === 'message.recorded' && e.data.role === 'assistant')
    .map((e) => e.data.text as string);
}

/** The pins (`core` of `turn.started`) of the turns of non-child sessions... of every turn, oldest first. */
export async function turnPins(
  home: string,
): Promise<{ turnId: string; revision?: string; slots: { id: string }[] }[]> {
  return (await eventsOf(home))
    .filter((e) => e.type === 'turn.started')
    .map((e) => ({ turnId: e.data.turnId, ...(e.data.core ?? { slots: [] }) }));
}

/** Reads until `done` holds, every 300 ms; after `timeoutMs` fails with the last value read. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last value: ${JSON.stringify(value).slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

export const readText = (path: string) => readFileSync(path, 'utf8');

/**
 * Makes the core's base_output wait (up to 60 s, or until its turn is stopped) before sending an answer that
 * says "hold on": an evolve whose child answers so is caught mid-way, its working copy written, nothing saved.
 */
export function makeBaseOutputWait(core: string): void {
  writeFileSync(
    join(core, 'output', 'base_output', 'module.ts'),
    [
      "import type { SlotContext } from '@demiurge/slots';",
      'export default async function baseOutput(ctx: SlotContext): Promise<void> {',
      "  if (ctx.output.response_text.includes('hold on')) {",
      '    await new Promise<void>((resolve) => {',
      '      const timer = setTimeout(resolve, 60_000);',
      "      ctx.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); });",
      '    });',
      '  }',
      '  await ctx.output.send_text(ctx.output.response_text);',
      '}',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(core, 'output', 'base_output', 'slot.yaml'),
    'entrypoint: module.ts\ntimeout_seconds: 120\nfailure_policy: hard\ncapabilities: [deliver]\n',
  );
}

/** Adds by hand the slot the "add a shout slot" evolve adds: a serial output slot upper-casing the answer. */
export function addShoutSlot(core: string): void {
  mkdirSync(join(core, 'output', 'shout'), { recursive: true });
  writeFileSync(join(core, 'output', 'shout', 'slot.yaml'), 'entrypoint: module.mjs\nfailure_policy: hard\n');
  writeFileSync(
    join(core, 'output', 'shout', 'module.mjs'),
    'export default async (ctx) => ctx.output.set_response_text(ctx.output.response_text.toUpperCase());\n',
  );
  const pipelines = join(core, 'pipelines.yaml');
  writeFileSync(
    pipelines,
    readFileSync(pipelines, 'utf8').replace('serial: [base_output]', 'serial: [shout, base_output]'),
  );
}
