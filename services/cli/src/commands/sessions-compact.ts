import { existsSync } from 'node:fs';
import { DemiurgeApp } from '@demiurge/host';
import { type CompactResult, connectOperator, operatorSocketPath } from '@demiurge/operator';
import { resolveHome } from '../home.js';
import type { CommandIo } from '../io.js';
import type { JsonOptions } from '../options.js';

/**
 * `demiurge sessions compact ID`: the model summarizes the session's older messages now (`session.compacted`).
 * Through the serving host's gateway (`operator.compact`) when one serves the home, else by a host in this process
 * (it needs the provider). The transcript keeps every message; only the model's view is compacted.
 */
export async function sessionsCompact(id: string, o: JsonOptions, io: CommandIo): Promise<void> {
  const { home } = resolveHome(o.home);
  const result = (await viaGateway(home, id)) ?? (await inProcess(home, id));
  if (o.json) return io.out(JSON.stringify({ compaction: result }));
  io.out(`session ${result.session_id} compacted (${result.compaction_id})`);
  io.out(`  ${result.message_count} messages summarized for the model, through ${result.through_message_id}`);
  io.out(
    `  estimated request: ~${result.tokens.before} -> ~${result.tokens.after} tokens (window ${result.tokens.window})`,
  );
  io.out('  the transcript keeps every message: "demiurge sessions show" marks the compaction');
}

async function viaGateway(home: string, sessionId: string): Promise<CompactResult | undefined> {
  const socket = operatorSocketPath(home);
  if (!existsSync(socket)) return undefined;
  // A socket nobody accepts on was left by a host that died: compact in this process instead.
  const client = await connectOperator(socket).catch(() => undefined);
  if (!client) return undefined;
  try {
    await client.request('operator.initialize', {
      protocol_version: 1,
      client: { name: 'demiurge-cli', version: '0.1.0' },
    });
    return await client.request('operator.compact', { session_id: sessionId });
  } finally {
    await client.close();
  }
}

async function inProcess(home: string, sessionId: string): Promise<CompactResult> {
  const app = await DemiurgeApp.start({ home, completionTurns: false });
  try {
    const r = await app.runtime.engine.compact(sessionId, { actor: { kind: 'operator', id: 'cli' } });
    return {
      session_id: r.sessionId,
      compaction_id: r.compactionId,
      message_count: r.messageCount,
      through_message_id: r.throughMessageId,
      summary: r.summary,
      tokens: r.tokens,
    };
  } finally {
    await app.close();
  }
}
