import {
  approvalEvents,
  type RecordedEvent,
  runEvents,
  TurnCancelled,
  TurnCompleted,
  TurnFailed,
  TurnStarted,
  toolCallEvents,
} from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import { applyApprovalEvent } from './approval.projection.js';
import { applyRunEvent } from './run.projection.js';
import { applyToolCallEvent } from './tool-call.projection.js';
import { applyTurnEvent } from './turn.projection.js';

type Apply = (event: RecordedEvent, tx: ProjectionTx) => void;

/** The handler of each aggregate, by the event type's first segment (`tool_call.started` → tool_call). */
const appliers: Readonly<Record<string, Apply>> = {
  run: applyRunEvent,
  turn: applyTurnEvent,
  tool_call: applyToolCallEvent,
  approval: applyApprovalEvent,
};

/**
 * The runs read model: every run (`runs`, `runs-by-session`, `live-runs` while not final) with its owner
 * lease, last checkpoint and turns (`turn-runs` remembers each turn's run); every foreground tool call
 * (`tool-calls`, `tool-calls-by-turn` in step order); every approval (`approvals`, `approvals-by-session`,
 * `open-approvals` while requested or granted). Statuses come from the run, tool-call and approval machines
 * (`nextState`); an event a machine refuses, or one for an aggregate never created, leaves the read model
 * unchanged.
 * @example
 * const store = createInMemoryEventStore({ projectors: [runsProjector] });
 * const live = await store.projection('runs').list<LiveRunEntry>(RunsCollections.liveRuns);
 */
export const runsProjector = defineProjector({
  name: 'runs',
  version: 1,
  handles: [
    ...runEvents,
    TurnStarted,
    TurnCompleted,
    TurnFailed,
    TurnCancelled,
    ...toolCallEvents,
    ...approvalEvents,
  ].map((e) => e.type),
  apply(event, tx) {
    appliers[event.type.slice(0, event.type.indexOf('.'))]?.(event, tx);
  },
});
