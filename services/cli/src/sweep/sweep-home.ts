import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createIdGenerator, systemClock } from '@demiurge/contracts';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { hostProjectors, storePath } from '@demiurge/host';
import { SessionRuntime } from '@demiurge/sessions';

/** One step of a fake provider script (`provider.fake_script`); `match` picks a delegated child's conversation. */
export interface FakeStep {
  readonly content?: string;
  readonly tool_calls?: readonly { name: string; arguments: Record<string, unknown> }[];
  readonly match?: string;
}

/** The keys of a sweep home's `config.yaml`. */
export interface HomeConfig {
  /** The fake provider's script (`script.json`). */
  readonly script: readonly FakeStep[];
  readonly webhookUrl?: string;
  /** `delivery.poll_ms` (default 50). */
  readonly pollMs?: number;
  /** `leases.run_ms`: a restarted host takes a dead host's runs over once it ran out. */
  readonly runLeaseMs?: number;
  /** `leases.work_ms`: the lease of durable work claims (deliveries, completion notices, schedule fires). */
  readonly workLeaseMs?: number;
  /** The scheduler on, ticking every `tickMs` (off by default). */
  readonly scheduler?: { readonly tickMs: number };
  /** The Agent Core directory. */
  readonly core?: string;
}

/** A home: its directory, its workspace (the host's working directory), its store file. */
export interface Home {
  readonly dir: string;
  readonly workspace: string;
  readonly db: string;
}

/** Creates the home layout and writes `config.yaml` and the fake script (`script.json`). */
export function writeHome(dir: string, config: HomeConfig): Home {
  const workspace = join(dir, 'ws');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(join(dir, 'runtime'), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'script.json'), JSON.stringify(config.script, null, 2));
  const lines = [
    'provider:',
    '  name: fake',
    '  fake_script: script.json',
    `workspace: ${workspace}`,
    'scheduler:',
    ...(config.scheduler ? ['  enabled: true', `  tick_ms: ${config.scheduler.tickMs}`] : ['  enabled: false']),
    'delivery:',
    `  poll_ms: ${config.pollMs ?? 50}`,
    ...(config.webhookUrl ? ['  webhook:', `    url: ${config.webhookUrl}`, '    timeout_ms: 5000'] : []),
    ...(config.runLeaseMs || config.workLeaseMs ? ['leases:'] : []),
    ...(config.runLeaseMs ? [`  run_ms: ${config.runLeaseMs}`] : []),
    ...(config.workLeaseMs ? [`  work_ms: ${config.workLeaseMs}`] : []),
    ...(config.core ? [`core: ${config.core}`] : []),
  ];
  writeFileSync(join(dir, 'config.yaml'), `${lines.join('\n')}\n`);
  return { dir, workspace, db: storePath(dir) };
}

/**
 * Creates `count` sessions bound to the `webhook` channel in a home's store while no host serves it, and
 * returns their ids: a turn submitted to one of them is answered through the webhook adapter (the gateway's
 * `operator.submit` only creates operator-channel sessions).
 */
export async function seedWebhookSessions(home: Home, count: number, coreId = 'default'): Promise<string[]> {
  const store = await openSqliteEventStore({ path: home.db, projectors: hostProjectors });
  try {
    const sessions = new SessionRuntime({ store, ids: createIdGenerator(systemClock) });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const { session } = await sessions.resolve(
        { coreId, channel: 'webhook', conversationKey: `sweep-${i}` },
        { title: `webhook conversation ${i}` },
      );
      ids.push(session.sessionId);
    }
    return ids;
  } finally {
    await store.close();
  }
}
