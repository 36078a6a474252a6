import type { Projector } from '@demiurge/event-store';
import { operatorStatusProjector } from '@demiurge/projector-operator-status';
import { outboxProjector } from '@demiurge/projector-outbox';
import { taskBoardProjector } from '@demiurge/projector-task-board';
import { workItemsProjector } from '@demiurge/projector-work-items';

/** The read models the control plane reads: register them with the store it uses. */
export const controlPlaneProjectors: readonly Projector[] = [
  taskBoardProjector,
  workItemsProjector,
  outboxProjector,
  operatorStatusProjector,
];
