import { controlPlaneProjectors } from '@demiurge/control-plane';
import type { Projector } from '@demiurge/event-store';
import { runsProjector } from '@demiurge/projector-runs';
import { sessionsProjector } from '@demiurge/projector-sessions';

/**
 * Every read model the host keeps inline with the log: sessions, runs (with tool calls and approvals),
 * the task board, work items, the outbox and the operator status view.
 */
export const hostProjectors: readonly Projector[] = [sessionsProjector, runsProjector, ...controlPlaneProjectors];
