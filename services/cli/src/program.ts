import { Command, CommanderError } from 'commander';
import { action, type CommandContext } from './command-context.js';
import { registerApprovals } from './commands/approvals.command.js';
import { registerCore } from './commands/core.command.js';
import { registerDoctor } from './commands/doctor.command.js';
import { registerEvents } from './commands/events.command.js';
import { registerHost } from './commands/host.command.js';
import { registerInit } from './commands/init.command.js';
import { registerLogTransfer } from './commands/log-transfer.command.js';
import { registerMcp } from './commands/mcp.command.js';
import { registerRebuild } from './commands/rebuild.command.js';
import { registerRuns } from './commands/runs.command.js';
import { registerSessions } from './commands/sessions.command.js';
import { registerSimulate } from './commands/simulate.command.js';
import { registerStatus } from './commands/status.command.js';
import { registerSweep } from './commands/sweep.command.js';
import { registerTasks } from './commands/tasks.command.js';
import { registerTui } from './commands/tui.command.js';
import { registerVerify } from './commands/verify.command.js';
import { registerWork } from './commands/work.command.js';
import { ExitCode } from './exit-code.js';
import { resolveHome } from './home.js';
import { type CommandIo, processIo } from './io.js';
import { homeOption } from './options.js';

const VERSION = '0.1.0';

// Command definitions are light (commander only); each command loads its implementation, and with it the
// runtime packages, when it runs, so `--help` and usage errors answer at once.
function buildProgram(ctx: CommandContext): Command {
  const { io } = ctx;
  const program = new Command('demiurge')
    .description('A durable, event-sourced runtime for AI-agent hosts.')
    .version(VERSION)
    .configureOutput({
      writeOut: (s) => io.out(s.trimEnd()),
      writeErr: (s) => io.err(s.trimEnd()),
      // One line: `demiurge: unknown option '--x' (run "demiurge --help" for usage)`.
      outputError: (s, write) =>
        write(
          `demiurge: ${s
            .trim()
            .replace(/^error: /, '')
            .replace(/\s*\n\s*/g, ' ')} (run "demiurge --help" for usage)`,
        ),
    })
    .exitOverride();

  // Subcommands inherit the output and exit settings above (commander copies them at creation).
  registerInit(program, ctx);
  registerStatus(program, ctx);
  registerSessions(program, ctx);
  registerRuns(program, ctx);
  registerTasks(program, ctx);
  registerWork(program, ctx);
  registerEvents(program, ctx);
  registerRebuild(program, ctx);
  registerVerify(program, ctx);
  registerDoctor(program, ctx);
  registerLogTransfer(program, ctx);
  registerHost(program, ctx);
  registerApprovals(program, ctx);
  registerTui(program, ctx);
  registerMcp(program, ctx);
  registerCore(program, ctx);
  registerSimulate(program, ctx);
  registerSweep(program, ctx);

  program
    .command('demo')
    .description(
      'run a scripted scenario end to end on the fake provider (tools, delegation, plan mode, cancel, a crash and its recovery, rebuild, verify); --sample appends a sample session only',
    )
    .addOption(homeOption())
    .option('--json', 'print one JSON object instead of text', false)
    .option('--sample', 'only append a sample session and print the projections', false)
    .action(
      action(ctx, async (o: { home?: string; json: boolean; sample: boolean }): Promise<ExitCode> => {
        if (!o.sample) return (await import('./commands/demo-scenario.js')).demoScenario(resolveHome(o.home), o, io);
        await (await import('./commands/demo.js')).demoCommand(resolveHome(o.home), o, io);
        return ExitCode.ok;
      }),
    );

  return program;
}

/**
 * Runs the CLI and returns its exit code: 0 done; 1 the runtime refused, a check failed or violations
 * were found (one line `demiurge: <reason>`, no stack unless DEMIURGE_DEBUG is set); 2 a usage or
 * configuration error.
 */
export async function runCli(argv: readonly string[], io: CommandIo = processIo): Promise<number> {
  const ctx: CommandContext = { io, exitCode: 0 };
  const program = buildProgram(ctx);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? 0 : 2;
    }
    const { describeError, exitCodeOf } = await import('./cli-errors.js');
    io.err(`demiurge: ${describeError(err)}`);
    if (process.env.DEMIURGE_DEBUG && err instanceof Error && err.stack) io.err(err.stack);
    return exitCodeOf(err);
  }
}
