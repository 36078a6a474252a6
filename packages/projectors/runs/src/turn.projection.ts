import { asDomainEvent, isEvent, type RecordedEvent } from '@demiurge/contracts';
import type { ProjectionTx } from '@demiurge/event-store';
import { evolveTurn, initialTurnFacts, NONE } from '@demiurge/lifecycle';
import type { RunView, TurnRunEntry } from './run.view.js';
import { RunsCollections } from './runs.collections.js';

/**
 * Applies `turn.started/completed/failed/cancelled` to the run the turn belongs to: a start with a
 * `runId` of a known run appends the turn to `turnIds` and makes it `currentTurnId` (remembering the
 * turn's run in `turn-runs`, since later turn events carry no runId); its ending clears `currentTurnId`
 * if it is still that turn. The turn's state comes from the turn fold (`evolveTurn` in `@demiurge/lifecycle`,
 * the turn engine's fold): a repeated start or ending is refused and changes nothing, as does any event of a
 * turn without a known run.
 */
export function applyTurnEvent(event: RecordedEvent, tx: ProjectionTx): void {
  if (!isEvent(event, 'turn.started', 'turn.completed', 'turn.failed', 'turn.cancelled')) return;
  const { turnId } = event.data;
  const turn = tx.get<TurnRunEntry>(RunsCollections.turnRuns, turnId);
  const before = turn ? { ...initialTurnFacts, status: turn.status, runId: turn.runId } : initialTurnFacts;
  const facts = evolveTurn(before, asDomainEvent(event));
  if (facts === undefined || facts.status === NONE) return;
  const runId = facts.runId;
  const run = runId === null ? undefined : tx.get<RunView>(RunsCollections.runs, runId);
  if (runId === null || !run) return;
  const started = event.type === 'turn.started';
  const next: RunView = {
    ...run,
    turnIds: started ? [...run.turnIds, turnId] : run.turnIds,
    currentTurnId: started ? turnId : run.currentTurnId === turnId ? null : run.currentTurnId,
    updatedAt: event.recordedAt,
  };
  const entry: TurnRunEntry = { runId, status: facts.status };
  tx.put(RunsCollections.turnRuns, turnId, entry);
  tx.put(RunsCollections.runs, runId, next);
}
