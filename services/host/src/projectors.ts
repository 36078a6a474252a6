import { controlPlaneProjectors } from '@demiurge/control-plane';
import type { Projector } from '@demiurge/event-store';
import { mcpServersProjector } from '@demiurge/projector-mcp-servers';
import { runsProjector } from '@demiurge/projector-runs';
import { sessionsProjector } from '@demiurge/projector-sessions';
import { scheduleInstancesProjector } from '@demiurge/scheduler';
import { slotRunsProjector } from '@demiurge/slots';

/**
 * Every read model the host keeps inline with the log: sessions, runs (with tool calls and approvals),
 * the task board, work items, the outbox, the operator status view, slot runs, schedule instances and MCP servers.
 */
export const hostProjectors: readonly Projector[] = [
  sessionsProjector,
  runsProjector,
  ...controlPlaneProjectors,
  slotRunsProjector,
  scheduleInstancesProjector,
  mcpServersProjector,
];
