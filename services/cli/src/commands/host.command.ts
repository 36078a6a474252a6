import { type Command, Option } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { resolveHome } from '../home.js';
import { homeOption, jsonOption } from '../options.js';
import type { HostFlags } from './host.js';

const hostOptions = (command: Command): Command =>
  command
    .addOption(homeOption())
    .addOption(new Option('--provider <name>', 'the model provider').choices(['fake', 'openai']))
    .option('--model <name>', 'the model')
    .option('--fake-script <file>', 'a fake provider script (YAML or JSON steps)')
    .option('--core <dir>', 'the Agent Core directory (default: the bundled agent/)')
    .option('--workspace <dir>', 'the root of file and shell tools (default: the current directory)');

type Flags = HostFlags & {
  home?: string;
  json?: boolean;
  logJson?: boolean;
  http?: string | boolean;
  session?: string;
  plan?: boolean;
  wait?: boolean;
};

/** `demiurge serve`, `gateway --stdio`, `run` and `chat` (implementations load on use: `host.ts`). */
export function registerHost(program: Command, ctx: CommandContext): void {
  hostOptions(program.command('serve').description('run the host daemon with the operator gateway on its unix socket'))
    .addOption(jsonOption())
    .option('--log-json', "write the host's log to stderr as JSON lines (level, time, msg, fields), info and up")
    .option(
      '--http [addr]',
      'also serve the web dashboard and its HTTP API on HOST:PORT (default 127.0.0.1:7780, or http.addr of config.yaml)',
    )
    .action(action(ctx, async (o: Flags) => (await import('./host.js')).serveCommand(resolveHome(o.home), o, ctx.io)));

  hostOptions(
    program
      .command('gateway')
      .description('speak the operator protocol (NDJSON) over stdin/stdout on an in-process host')
      .requiredOption('--stdio', 'use stdin/stdout (the only transport of this command)'),
  ).action(action(ctx, async (o: Flags) => (await import('./host.js')).gatewayCommand(resolveHome(o.home), o, ctx.io)));

  hostOptions(
    program
      .command('run')
      .description('run one turn and print the reply (through a serving host, else in this process)')
      .argument('<text>', 'the input')
      .option('--session <id>', 'continue this session')
      .option(
        '--plan',
        'run in plan mode (mutating calls are denied, or wait for an approval with plan_mode.on_write: ask)',
      )
      .option('--wait', 'wait for detached tasks the turn started before closing'),
  )
    .addOption(jsonOption())
    .action(
      action(ctx, async (text: string, o: Flags) =>
        (await import('./host.js')).runCommand(resolveHome(o.home), text, o, ctx.io),
      ),
    );

  hostOptions(
    program
      .command('chat')
      .description('an interactive operator session (reads one message per line when stdin is not a terminal)')
      .option('--session <id>', 'continue this session')
      .option('--plan', 'plan mode'),
  )
    .addOption(jsonOption())
    .action(action(ctx, async (o: Flags) => (await import('./host.js')).chatCommand(resolveHome(o.home), o, ctx.io)));
}
