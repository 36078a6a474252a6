import type { Command } from 'commander';
import { action, type CommandContext } from '../command-context.js';
import { homeOption, jsonOption, nonEmpty } from '../options.js';
import type { ApprovalDecisionOptions, ApprovalsListOptions } from './approvals.js';

const load = () => import('./approvals.js');

/** `demiurge approvals list|grant|deny` (the implementation loads on use: `approvals.ts`). */
export function registerApprovals(program: Command, ctx: CommandContext): void {
  const approvals = program
    .command('approvals')
    .description(
      'tool calls waiting for an operator: list them, grant or deny one (through the serving host, else on the store)',
    );
  approvals
    .command('list')
    .description('open approvals: requested (a run waits) or granted and not used yet')
    .option('--session <id>', 'only the approvals of this session')
    .addOption(homeOption())
    .addOption(jsonOption())
    .action(action(ctx, async (o: ApprovalsListOptions) => (await load()).approvalsList(o, ctx.io)));
  for (const decision of ['grant', 'deny'] as const) {
    approvals
      .command(decision)
      .description(
        decision === 'grant'
          ? 'allow the waiting call once: the run goes on and makes it'
          : 'refuse the waiting call: the run goes on without it (the model is told it was denied)',
      )
      .argument('<id>', 'the approval id (apr_...)')
      .option('--note <text>', 'kept with the decision', nonEmpty('--note'))
      .addOption(homeOption())
      .addOption(jsonOption())
      .action(
        action(ctx, async (id: string, o: ApprovalDecisionOptions) =>
          (await load()).approvalsDecide(id, decision, o, ctx.io),
        ),
      );
  }
}
