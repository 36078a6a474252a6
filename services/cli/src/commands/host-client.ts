import { existsSync } from 'node:fs';
import { type ConfigOverrides, DemiurgeApp } from '@demiurge/host';
import { connectOperator, type OperatorClient, type OperatorEvent, operatorSocketPath } from '@demiurge/operator';
import { filter, firstValueFrom } from 'rxjs';

/** One answered input. */
export interface Reply {
  readonly sessionId: string;
  readonly runId: string;
  readonly turnId: string;
  readonly status: string;
  readonly text: string;
  readonly error?: { code: string; message: string };
}

/** Where `run` and `chat` send inputs: a serving host's gateway, or a host in this process. */
export interface TurnClient {
  readonly via: 'gateway' | 'in-process';
  send(text: string, options: { sessionId?: string; plan?: boolean }): Promise<Reply>;
  /** Waits for the session's detached tasks to end (in-process only; a serving host keeps them). */
  waitForTasks(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

/** Connects to the host serving `home`, or starts one in this process (closed by the close contract). */
export async function openTurnClient(home: string, overrides: ConfigOverrides): Promise<TurnClient> {
  const socket = operatorSocketPath(home);
  if (existsSync(socket)) {
    const client = await connectOperator(socket).catch(() => undefined);
    if (client) return gatewayClient(client);
  }
  // One-shot hosting: no completion turns (notices wait for `serve`, or join this session's next input).
  return inProcessClient(await DemiurgeApp.start({ home, overrides, completionTurns: false }));
}

function gatewayClient(client: OperatorClient): TurnClient {
  let initialized: Promise<unknown> | undefined;
  return {
    via: 'gateway',
    async send(text, options) {
      initialized ??= client.request('operator.initialize', {
        protocol_version: 1,
        client: { name: 'demiurge-cli', version: '0.1.0' },
      });
      await initialized;
      let turnId: string | undefined;
      const pending: OperatorEvent[] = [];
      const sub = client.events$.subscribe((e) => pending.push(e));
      const done = firstValueFrom(
        client.events$.pipe(
          filter((e) => {
            const p = e.payload as { turn_id?: string; subject?: string; state?: string };
            return e.event === 'operator.status' && p.subject === 'turn' && p.turn_id === turnId;
          }),
        ),
      );
      const result = await client.request('operator.submit', {
        text,
        ...(options.sessionId ? { session_id: options.sessionId } : {}),
        ...(options.plan !== undefined ? { plan: options.plan } : {}),
      });
      turnId = result.turn_id;
      const seen = pending.find(
        (e) => e.event === 'operator.status' && (e.payload as { turn_id?: string }).turn_id === turnId,
      );
      const status = (seen ?? (await done)).payload as { state: string; error?: { code: string; message: string } };
      sub.unsubscribe();
      const history = (await client.request('operator.history', { session_id: result.session_id })) as {
        messages: { role: string; text: string; turn_id?: string }[];
      };
      const answer = history.messages.filter((m) => m.turn_id === turnId && m.role === 'assistant').at(-1);
      return {
        sessionId: result.session_id,
        runId: result.run_id,
        turnId: result.turn_id,
        status: status.state,
        text: answer?.text ?? status.error?.message ?? '',
        ...(status.error ? { error: status.error } : {}),
      };
    },
    async waitForTasks() {},
    async close() {
      await client.close();
    },
  };
}

function inProcessClient(app: DemiurgeApp): TurnClient {
  return {
    via: 'in-process',
    async send(text, options) {
      const submitted = await app.submit({
        text,
        ...(options.sessionId ? { sessionId: options.sessionId } : { channel: 'operator', conversationKey: 'cli' }),
        ...(options.plan !== undefined ? { plan: options.plan } : {}),
      });
      const outcome = await submitted.outcome;
      return {
        sessionId: submitted.sessionId,
        runId: submitted.runId,
        turnId: submitted.turnId,
        status: outcome.status,
        text: outcome.text,
        ...(outcome.error ? { error: outcome.error } : {}),
      };
    },
    async waitForTasks(sessionId) {
      for (;;) {
        const tasks = await app.runtime.controlPlane.listTasks(sessionId);
        if (!tasks.some((t) => ['created', 'active', 'waiting'].includes(t.status))) return;
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async close() {
      await app.close();
    },
  };
}
