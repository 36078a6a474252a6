import type { Clock, IdGenerator } from '@demiurge/contracts';
import type { McpServers } from '@demiurge/mcp';
import { SchedulerRuntime, type ScheduleSource } from '@demiurge/scheduler';
import type { AgentCore } from '@demiurge/slots';
import type { TurnRuntime } from '@demiurge/turn-engine';
import type { Logger } from '../logger.js';
import { SCHEDULE_CHANNEL } from '../schedule-delivery.js';
import type { HostStore } from '../store/host-store.js';

// The host's services beside the turn runtime: the core's MCP servers and the scheduler (createRuntime wires them).

/**
 * Starts the core's MCP servers (`mcp.yaml`) before any turn or recovery runs, so a resumed run finds their
 * tools; each tool is registered as `<server>__<tool>` (a server that comes up later, lists a new tool on a
 * restart, or changes its tools with `tools/list_changed` changes the registry then: turns admitted from then on
 * pin the new list). The SDK is loaded only for a core that lists servers.
 */
export async function startMcpServers(deps: {
  store: HostStore;
  clock: Clock;
  ids: IdGenerator;
  owner: string;
  core: AgentCore;
  turns: TurnRuntime;
  logger: Logger;
  isHostAlive: (owner: string) => boolean;
}): Promise<McpServers | undefined> {
  const { core, turns } = deps;
  if (core.mcpServers.length === 0) return undefined;
  const { McpServers } = await import('@demiurge/mcp');
  const mcp = new McpServers({
    store: deps.store,
    clock: deps.clock,
    ids: deps.ids,
    host: deps.owner,
    coreId: core.id,
    servers: core.mcpServers,
    logger: deps.logger,
    isHostAlive: deps.isHostAlive,
  });
  mcp.onToolsChanged(({ added, removed }) => {
    for (const name of removed) turns.tools.unregister(name);
    for (const tool of added) if (!turns.tools.get(tool.name)) turns.tools.register(tool);
  });
  await mcp.start();
  return mcp;
}

/** The scheduler: a fire resolves its own session (one per fire key) and runs one turn in it. */
export function createScheduler(deps: {
  store: HostStore;
  clock: Clock;
  ids: IdGenerator;
  owner: string;
  core: AgentCore;
  turns: TurnRuntime;
  /** The work lease (`leases.work_ms`): a fire's claim is renewed at a third of it while its turn runs. */
  workLeaseMs: number;
  schedules: ScheduleSource;
}): SchedulerRuntime {
  const { store, clock, ids, owner, core, turns } = deps;
  return new SchedulerRuntime({
    store,
    clock,
    ids,
    host: turns.host,
    work: turns.work,
    controlPlane: turns.controlPlane,
    coreId: core.id,
    owner,
    schedules: deps.schedules,
    startSession: async (spec) => {
      const { session } = await turns.sessions.resolve(
        { coreId: spec.coreId, channel: SCHEDULE_CHANNEL, conversationKey: spec.fireKey },
        { title: spec.title },
      );
      return { sessionId: session.sessionId };
    },
    fire: async (fire) => {
      // The fire's claim lives while its turn runs (a turn can outlast the work lease): a lost claim (another
      // host took the fire over) stops the heartbeat, and the fire's settle reports it.
      const beat = setInterval(
        () => {
          fire.heartbeat().catch(() => clearInterval(beat));
        },
        Math.max(500, Math.round(deps.workLeaseMs / 3)),
      );
      beat.unref();
      const outcome = await turns.engine
        .runTurn({ sessionId: fire.sessionId, text: fire.prompt, actor: { kind: 'schedule', id: fire.scheduleId } })
        .finally(() => clearInterval(beat));
      if (outcome.status === 'interrupted') {
        throw new Error(
          'the host closed while the scheduled turn ran; the next host start resumes the turn (its answer is recorded in the fire session)',
        );
      }
      if (outcome.status !== 'completed')
        throw new Error(`the scheduled turn ended ${outcome.status}: ${outcome.text}`);
      return { summary: outcome.text };
    },
  });
}
