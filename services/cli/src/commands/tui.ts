import { spawn } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { type ConfigOverrides, DemiurgeApp, serveGatewayStdio } from '@demiurge/host';
import { ExitCode, UsageError } from '../cli-errors.js';
import { resolveHome } from '../home.js';
import type { CommandIo } from '../io.js';
import { closeWithin, exitIfHeldOpen } from './close-within.js';

/** The executable the original TUI runs as `$DEMIURGE_TUI_GATEWAY_PYTHON -m demiurge.ui_gateway.entry`. */
export const TUI_GATEWAY_SHIM = resolve(import.meta.dirname, '..', '..', 'bin', 'demiurge-tui-gateway');

/**
 * The original client's gateway settings (`DEMIURGE_TUI_GATEWAY_CONFIG`, or `--config-json`): every key
 * optional; keys this runtime has no use for (`agents_root`, `workspace_fallback`) are ignored.
 */
export interface TuiGatewayConfig {
  readonly home?: string;
  readonly core?: string;
  readonly provider?: string;
  readonly model?: string;
  readonly fake_script?: string;
  readonly workspace?: string;
  readonly session?: string;
  readonly resume?: string;
  readonly tool_display?: string;
  readonly busy_mode?: string;
  readonly timezone?: string;
}

const STRING_KEYS = [
  'home',
  'core',
  'provider',
  'model',
  'fake_script',
  'workspace',
  'session',
  'resume',
  'tool_display',
  'busy_mode',
  'timezone',
] as const;

/** Parses the config JSON; throws naming what is wrong. */
export function parseTuiGatewayConfig(raw: string | undefined): TuiGatewayConfig {
  const value: unknown = JSON.parse(raw && raw.trim() !== '' ? raw : '{}');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error('the gateway config must be a JSON object');
  }
  const config: Record<string, unknown> = Object.fromEntries(Object.entries(value));
  for (const key of STRING_KEYS) {
    if (config[key] !== undefined && config[key] !== null && typeof config[key] !== 'string') {
      throw new Error(`the gateway config's "${key}" must be a string`);
    }
  }
  if (config.provider && !['fake', 'openai', 'auto'].includes(config.provider as string)) {
    throw new Error(`the gateway config's "provider" must be fake or openai, not ${String(config.provider)}`);
  }
  return config as TuiGatewayConfig;
}

function overridesOf(config: TuiGatewayConfig): ConfigOverrides {
  const provider = config.provider === 'fake' || config.provider === 'openai' ? config.provider : undefined;
  return {
    ...(provider ? { provider } : {}),
    ...(config.model ? { model: config.model } : {}),
    ...(config.fake_script ? { fakeScript: resolve(config.fake_script) } : {}),
    ...(config.core ? { core: resolve(config.core) } : {}),
    ...(config.workspace ? { workspace: resolve(config.workspace) } : {}),
  };
}

function writeEvent(event: string, payload: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ event, payload })}\n`);
}

/**
 * `demiurge tui-gateway`: the gateway the original TUI starts, on stdin/stdout, with the original's exit
 * codes: `operator.shutdown` or `/exit` 0; end of input 1; a startup failure 1 (an `operator.error` on
 * stdout); a configuration error or a protocol/identity mismatch 2.
 */
export async function tuiGatewayCommand(configJson: string | undefined, io: CommandIo): Promise<number> {
  let config: TuiGatewayConfig;
  try {
    config = parseTuiGatewayConfig(configJson ?? process.env.DEMIURGE_TUI_GATEWAY_CONFIG);
  } catch (error) {
    writeEvent('operator.error', {
      code: 'config_error',
      message: `gateway configuration could not be loaded: ${(error as Error).message}`,
      source: 'gateway_config',
    });
    return 2;
  }
  const paths = resolveHome(config.home);
  let app: DemiurgeApp;
  const sessionId = config.resume || config.session || undefined;
  try {
    app = await DemiurgeApp.start({ home: paths.home, overrides: overridesOf(config) });
  } catch (error) {
    writeEvent('operator.error', { message: (error as Error).message, source: 'gateway_startup' });
    return 1;
  }
  if (sessionId !== undefined) {
    try {
      await app.runtime.sessions.get(sessionId);
    } catch (error) {
      writeEvent('operator.error', { message: (error as Error).message, source: 'gateway_startup' });
      await app.close();
      return 1;
    }
  }
  let finish!: (code: number) => void;
  const ended = new Promise<number>((r) => {
    finish = r;
  });
  // After the answer that asked for it is written (pipes write synchronously on Linux; the timer is margin).
  let requested: number | undefined;
  const endWith = (code: number) => {
    requested ??= code;
    setTimeout(() => finish(code), 20);
  };
  // DEMIURGE_TUI_GATEWAY_TRACE=FILE appends every frame the client receives to FILE (tests read it).
  const trace = process.env.DEMIURGE_TUI_GATEWAY_TRACE;
  let output: NodeJS.WritableStream = process.stdout;
  if (trace) {
    const tee = new PassThrough();
    tee.on('data', (chunk: Buffer) => appendFileSync(trace, chunk));
    tee.pipe(process.stdout);
    output = tee;
  }
  const server = serveGatewayStdio(
    app,
    { input: process.stdin, output },
    {
      onRefused: () => endWith(2),
      session: {
        ...(sessionId ? { sessionId } : {}),
        ...(config.busy_mode === 'queue' || config.busy_mode === 'interrupt' ? { busyMode: config.busy_mode } : {}),
        ...(config.tool_display === 'quiet' || config.tool_display === 'summary' || config.tool_display === 'full'
          ? { toolDisplay: config.tool_display }
          : {}),
        ...(config.timezone ? { timezone: config.timezone } : {}),
        onExit: () => endWith(0),
      },
    },
  );
  // The end of input after a shutdown (the TUI sends shutdown, then closes stdin) is still a shutdown: 0.
  const code = await Promise.race([server.closed.then(() => requested ?? 1), ended]);
  const closed = await closeWithin(app, () => server.close('gateway closing'), io);
  process.stdin.destroy();
  // The client waits for this process to end before it exits: a handle the close missed must not keep it waiting.
  exitIfHeldOpen(code, io);
  return closed === ExitCode.ok ? code : closed;
}

/** What `demiurge tui` passes on to the client's gateway. */
export interface TuiFlags {
  readonly client?: string;
  readonly home?: string;
  readonly provider?: string;
  readonly model?: string;
  readonly fakeScript?: string;
  readonly core?: string;
  readonly workspace?: string;
  readonly session?: string;
  readonly resume?: string;
  readonly busyMode?: string;
  readonly toolDisplay?: string;
}

/**
 * `demiurge tui --client PATH`: starts the original terminal UI (its bundle's `entry.js`) in this terminal
 * with its gateway pointed at this host (the shim above, and the settings as `DEMIURGE_TUI_GATEWAY_CONFIG`).
 * Ends with the client's exit code.
 */
export async function tuiCommand(flags: TuiFlags, io: CommandIo): Promise<number> {
  const client = flags.client ?? process.env.DEMIURGE_TUI_CLIENT;
  if (!client)
    throw new UsageError('no client: pass --client PATH (the TUI bundle entry.js) or set DEMIURGE_TUI_CLIENT');
  const entry = resolve(client);
  if (!existsSync(entry)) throw new UsageError(`no TUI client at ${entry}`);
  const home = resolveHome(flags.home).home;
  const config: TuiGatewayConfig = {
    home,
    ...(flags.provider ? { provider: flags.provider } : {}),
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.fakeScript ? { fake_script: resolve(flags.fakeScript) } : {}),
    ...(flags.core ? { core: resolve(flags.core) } : {}),
    ...(flags.workspace ? { workspace: resolve(flags.workspace) } : {}),
    ...(flags.session ? { session: flags.session } : {}),
    ...(flags.resume ? { resume: flags.resume } : {}),
    ...(flags.busyMode ? { busy_mode: flags.busyMode } : {}),
    ...(flags.toolDisplay ? { tool_display: flags.toolDisplay } : {}),
  };
  if (!process.stdin.isTTY) io.err('demiurge: the TUI needs a terminal (stdin is not a TTY)');
  const child = spawn(process.execPath, [entry], {
    stdio: 'inherit',
    env: {
      ...process.env,
      DEMIURGE_TUI_GATEWAY_PYTHON: TUI_GATEWAY_SHIM,
      DEMIURGE_NODE: process.execPath,
      DEMIURGE_TUI_GATEWAY_CONFIG: JSON.stringify(config),
    },
  });
  return new Promise<number>((resolveCode, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolveCode(code ?? (signal ? 1 : 0)));
  });
}
