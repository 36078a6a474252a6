import { controlPlaneProjectors } from '@demiurge/control-plane';
import type { Projector } from '@demiurge/event-store';
import { scheduleInstancesProjector } from './schedule-instances.projector.js';

/**
 * The read models a scheduling process needs: the control plane's (task board, work items, outbox,
 * operator status) and `schedule-instances`. Register them with the store in every such process.
 *
 * @example
 * const store = await openSqliteEventStore({ path, projectors: schedulerProjectors });
 */
export const schedulerProjectors: readonly Projector[] = [...controlPlaneProjectors, scheduleInstancesProjector];
