import { isEvent, type RecordedEvent } from '@demiurge/contracts';
import type { ProjectionTx } from '@demiurge/event-store';
import { NONE, nextState, type TurnEventType, type TurnState, turnLifecycle } from '@demiurge/lifecycle';
import type { RunView, TurnRunEntry } from './run.view.js';
import { RunsCollections } from './runs.collections.js';

/**
 * Applies `turn.started/completed/failed/cancelled` to the run the turn belongs to: a start with a
 * `runId` of a known run appends the turn to `turnIds` and makes it `currentTurnId` (remembering the
 * turn's run in `turn-runs`, since later turn events carry no runId); its ending clears `currentTurnId`
 * if it is still that turn. The turn's state comes from the turn machine: a repeated start or ending is
 * refused and changes nothing, as does any event of a turn without a known run.
 */
export function applyTurnEvent(event: RecordedEvent, tx: ProjectionTx): void {
  if (!isEvent(event, 'turn.started', 'turn.completed', 'turn.failed', 'turn.cancelled')) return;
  const { turnId } = event.data;
  const turn = tx.get<TurnRunEntry>(RunsCollections.turnRuns, turnId);
  const from: TurnState = turn?.status ?? NONE;
  const to = nextState(turnLifecycle, from, { type: event.type as TurnEventType, data: event.data });
  if (to === undefined || to === NONE) return;
  const runId = turn?.runId ?? (isEvent(event, 'turn.started') ? event.data.runId : undefined);
  const run = runId === undefined ? undefined : tx.get<RunView>(RunsCollections.runs, runId);
  if (runId === undefined || !run) return;
  const started = event.type === 'turn.started';
  const next: RunView = {
    ...run,
    turnIds: started ? [...run.turnIds, turnId] : run.turnIds,
    currentTurnId: started ? turnId : run.currentTurnId === turnId ? null : run.currentTurnId,
    updatedAt: event.recordedAt,
  };
  const entry: TurnRunEntry = { runId, status: to };
  tx.put(RunsCollections.turnRuns, turnId, entry);
  tx.put(RunsCollections.runs, runId, next);
}
