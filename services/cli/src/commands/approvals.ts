import { existsSync } from 'node:fs';
import { createIdGenerator, systemClock } from '@demiurge/contracts';
import { connectOperator, type OperatorClient, operatorSocketPath } from '@demiurge/operator';
import type { ApprovalView } from '@demiurge/projector-runs';
import { ApprovalRuntime } from '@demiurge/turn-engine';
import { orDash, shorten, shortJson, table } from '../format.js';
import { type HomePaths, resolveHome } from '../home.js';
import type { CommandIo } from '../io.js';
import type { JsonOptions } from '../options.js';
import { CLI_OWNER } from '../runtime.js';
import { withRuntimeStore } from '../runtime-store.js';

export interface ApprovalsListOptions extends JsonOptions {
  readonly session?: string;
}

export interface ApprovalDecisionOptions extends JsonOptions {
  readonly note?: string;
}

/** An open approval (requested, or granted and not used yet) as `approvals list` shows it. */
export interface OpenApproval {
  readonly approvalId: string;
  readonly sessionId: string;
  readonly runId: string | null;
  readonly tool: string | null;
  readonly arguments: unknown;
  readonly reason: string | null;
  readonly status: string;
  readonly expiresAt: string | null;
}

/** The exact command that grants an approval (what a blocked `run` prints). */
export function grantCommand(approvalId: string, home: string): string {
  return `demiurge approvals grant ${approvalId} --home ${quoteArg(home)}`;
}

function quoteArg(value: string): string {
  return /^[\w./@:+-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

const CLI_ACTOR = { kind: 'operator' as const, id: CLI_OWNER };

/**
 * The serving host's gateway, initialized, when one serves the home (else undefined: the command works on
 * the store in this process). A socket nobody accepts on (a crashed host's) counts as none.
 */
async function servingGateway(paths: HomePaths): Promise<OperatorClient | undefined> {
  const socket = operatorSocketPath(paths.home);
  if (!existsSync(socket)) return undefined;
  const client = await connectOperator(socket).catch(() => undefined);
  if (!client) return undefined;
  await client.request('operator.initialize', {
    protocol_version: 1,
    client: { name: 'demiurge-cli', version: '0.1.0' },
  });
  return client;
}

async function withGateway<T>(
  paths: HomePaths,
  viaGateway: (client: OperatorClient) => Promise<T>,
  inProcess: (approvals: ApprovalRuntime) => Promise<T>,
): Promise<{ result: T; via: 'gateway' | 'store' }> {
  const client = await servingGateway(paths);
  if (client) {
    try {
      return { result: await viaGateway(client), via: 'gateway' };
    } finally {
      await client.close();
    }
  }
  const result = await withRuntimeStore(paths, (store) =>
    inProcess(
      new ApprovalRuntime({
        store,
        clock: systemClock,
        ids: createIdGenerator(systemClock),
        meta: { actor: CLI_ACTOR },
      }),
    ),
  );
  return { result, via: 'store' };
}

function fromView(v: ApprovalView): OpenApproval {
  return {
    approvalId: v.approvalId,
    sessionId: v.sessionId,
    runId: v.runId,
    tool: v.tool,
    arguments: v.arguments,
    reason: v.reason,
    status: v.status,
    expiresAt: v.expiresAt,
  };
}

/** `demiurge approvals list`: open approvals (through the serving host, else from the store). */
export async function approvalsList(o: ApprovalsListOptions, io: CommandIo): Promise<void> {
  const paths = resolveHome(o.home);
  const { result: approvals } = await withGateway(
    paths,
    async (client) => {
      const status = await client.request('operator.status');
      return status.open_approvals
        .filter((a) => !o.session || a.session_id === o.session)
        .map(
          (a): OpenApproval => ({
            approvalId: a.approval_id,
            sessionId: a.session_id,
            runId: a.run_id ?? null,
            tool: a.tool,
            arguments: a.arguments ?? null,
            reason: a.reason ?? null,
            status: a.status,
            expiresAt: a.expires_at,
          }),
        );
    },
    async (runtime) => (await runtime.listOpen(o.session)).map(fromView),
  );
  if (o.json) return io.out(JSON.stringify({ approvals }));
  if (approvals.length === 0) return io.out('no open approvals');
  for (const line of table(approvals, [
    { heading: 'approval', cell: (a) => a.approvalId },
    { heading: 'status', cell: (a) => a.status },
    { heading: 'run', cell: (a) => orDash(a.runId) },
    { heading: 'call', cell: (a) => `${orDash(a.tool)} ${shortJson(a.arguments ?? {}, 60)}` },
    { heading: 'expires', cell: (a) => orDash(a.expiresAt) },
    { heading: 'reason', cell: (a) => shorten(a.reason ?? '-', 60) },
  ]))
    io.out(line);
}

/** `demiurge approvals grant|deny ID`: the decision, through the serving host, else on the store. */
export async function approvalsDecide(
  id: string,
  decision: 'grant' | 'deny',
  o: ApprovalDecisionOptions,
  io: CommandIo,
): Promise<void> {
  const paths = resolveHome(o.home);
  const { via } = await withGateway(
    paths,
    async (client) => {
      await client.request('operator.reply_approval', {
        approval_id: id,
        decision,
        ...(o.note ? { note: o.note } : {}),
      });
    },
    async (runtime) => {
      await runtime.get(id);
      if (decision === 'grant') await runtime.grant(id, CLI_ACTOR, o.note);
      else await runtime.deny(id, CLI_ACTOR, o.note);
    },
  );
  const status = decision === 'grant' ? 'granted' : 'denied';
  if (o.json) return io.out(JSON.stringify({ approvalId: id, status, via }));
  io.out(`approval ${id}: ${status}${via === 'gateway' ? ' (through the serving host)' : ''}`);
}
