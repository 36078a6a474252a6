import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { resolveHome } from '../home.js';
import { homeOption } from '../options.js';
import type { HostFlags } from './host.js';

/** `demiurge mcp`: this runtime as an MCP server on stdio (the implementation loads on use: `mcp.ts`). */
export function registerMcp(program: Command, ctx: CommandContext): void {
  program
    .command('mcp')
    .description(
      'serve this runtime as an MCP server over stdin/stdout: tools to submit a message, read the status, list and show tasks and runs, cancel',
    )
    .addOption(homeOption())
    .option('--fake-script <file>', 'a fake provider script for submitted messages (YAML or JSON steps)')
    .option('--core <dir>', 'the Agent Core directory for submitted messages (default: the bundled agent/)')
    .option('--workspace <dir>', 'the root of file and shell tools (default: the current directory)')
    .action(
      action(ctx, async (o: HostFlags & { home?: string }) =>
        (await import('./mcp.js')).mcpCommand(resolveHome(o.home), o, ctx.io),
      ),
    );
}
