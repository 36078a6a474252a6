import { type Command, Option } from 'commander';
import type { ExitCode } from '../cli-errors.js';
import { action, type CommandContext } from '../command-context.js';
import { homeOption } from '../options.js';
import type { TuiFlags } from './tui.js';

/** `demiurge tui` (the original terminal UI on this host) and `tui-gateway` (the gateway it starts). */
export function registerTui(program: Command, ctx: CommandContext): void {
  program
    .command('tui')
    .description('start the original Demiurge terminal UI (its entry.js) with its gateway pointed at this host')
    .option('--client <path>', 'the TUI bundle entry.js (default: $DEMIURGE_TUI_CLIENT)')
    .addOption(homeOption())
    .addOption(new Option('--provider <name>', 'the model provider').choices(['fake', 'openai']))
    .option('--model <name>', 'the model')
    .option('--fake-script <file>', 'a fake provider script (YAML or JSON steps)')
    .option('--core <dir>', 'the Agent Core directory (default: the bundled agent/)')
    .option('--workspace <dir>', 'the root of file and shell tools (default: the current directory)')
    .option('--session <id>', 'continue this session (its history is shown)')
    .addOption(
      new Option('--busy-mode <mode>', 'what a second input does while a turn runs').choices(['interrupt', 'queue']),
    )
    .addOption(new Option('--tool-display <level>', 'how tool calls show').choices(['quiet', 'summary', 'full']))
    .action(action(ctx, async (o: TuiFlags) => (await (await import('./tui.js')).tuiCommand(o, ctx.io)) as ExitCode));

  program
    .command('tui-gateway', { hidden: true })
    .description('the gateway the original TUI starts (as `-m demiurge.ui_gateway.entry` through the shim)')
    .option('--config-json <json>', 'the gateway config (default: $DEMIURGE_TUI_GATEWAY_CONFIG)')
    .action(
      action(
        ctx,
        async (o: { configJson?: string }) =>
          (await (await import('./tui.js')).tuiGatewayCommand(o.configJson, ctx.io)) as ExitCode,
      ),
    );
}
