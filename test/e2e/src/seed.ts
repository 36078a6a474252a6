import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIdGenerator, IdPrefix, systemClock } from '@demiurge/contracts';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { hostProjectors } from '@demiurge/host';
import { createFakeProvider } from '@demiurge/providers';
import { createTurnRuntime } from '@demiurge/turn-engine';

/** The ids of what {@link seedRuntime} put in the store. */
export interface Seeded {
  readonly sessionId: string;
  /** A run that completed one turn with one `list_dir` tool call (step s1). */
  readonly completedRunId: string;
  readonly turnId: string;
  readonly toolCallId: string;
  /** A live run owned by `seed-host` (lease `runLeaseMs`), with a child task and an open approval. */
  readonly liveRunId: string;
  readonly childTaskId: string;
  readonly approvalId: string;
  /** A task of no run, for the cancel → delete → archive flow. */
  readonly taskId: string;
  /** A `delivery.send` work item whose send was interrupted: `unknown`, waiting for an operator. */
  readonly unknownWorkId: string;
}

/**
 * Seeds a home's store the way a host would, through the runtimes (session, turn engine with the fake
 * provider, run runtime, control plane, durable work, approvals), on the real SQLite file the CLI opens.
 */
export async function seedRuntime(home: string, options: { runLeaseMs?: number } = {}): Promise<Seeded> {
  mkdirSync(join(home, 'runtime'), { recursive: true, mode: 0o700 });
  const store = await openSqliteEventStore({
    path: join(home, 'runtime', 'runtime.sqlite3'),
    projectors: hostProjectors,
  });
  const workspace = mkdtempSync(join(tmpdir(), 'demiurge-seed-ws-'));
  try {
    const ids = createIdGenerator(systemClock);
    const rt = createTurnRuntime({
      store,
      clock: systemClock,
      ids,
      owner: 'seed-host',
      workspaceRoot: workspace,
      runLeaseMs: options.runLeaseMs ?? 3_600_000,
      provider: createFakeProvider({
        script: [
          { content: 'Let me look.', tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] },
          { content: 'Nothing here.' },
        ],
      }),
    });
    const session = await rt.sessions.create({ title: 'Seeded session', coreId: 'default' });
    const sessionId = session.sessionId;
    const outcome = await rt.engine.runTurn({ sessionId, text: 'What is in the workspace?' });
    if (outcome.status !== 'completed') throw new Error(`seed turn ended ${outcome.status}: ${outcome.text}`);
    const calls = await store.projection('runs').list<{ toolCallId: string }>('tool-calls');

    const live = rt.runs.startStream(sessionId);
    await store.append(live.stream);
    const child = await rt.controlPlane.submitTask({
      sessionId,
      runId: live.runId,
      kind: 'terminal.exec',
      title: 'list files',
      input: { command: 'ls' },
    });
    const approval = rt.approvals.requestStream({
      sessionId,
      runId: live.runId,
      tool: 'write_file',
      arguments: { path: 'notes.md', content: 'hello' },
      reason: 'plan mode: write_file needs an approval',
    });
    await store.append(approval.stream);

    const task = await rt.controlPlane.submitTask({
      sessionId,
      kind: 'terminal.exec',
      title: 'sleep a while',
      input: { command: 'sleep', args: ['60'] },
    });

    const { workId } = await rt.host.enqueueDelivery({
      sessionId,
      messageId: ids.next(IdPrefix.message),
      channel: 'webhook',
    });
    const claim = await rt.work.claim(workId);
    await rt.work.markSending(claim);
    await rt.work.markUnknown(claim, 'the webhook timed out after the request was sent');

    return {
      sessionId,
      completedRunId: outcome.runId,
      turnId: outcome.turnId,
      toolCallId: calls[0]!.toolCallId,
      liveRunId: live.runId,
      childTaskId: child.taskId,
      approvalId: approval.approvalId,
      taskId: task.taskId,
      unknownWorkId: workId,
    };
  } finally {
    await store.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}
