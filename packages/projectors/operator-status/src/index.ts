export { operatorStatusProjector } from './operator-status.projector.js';
export { type OperatorStatus, type OperatorStatusReader, operatorStatusReader } from './operator-status.reader.js';
export {
  countKey,
  countsPrefix,
  LAST_ERROR_ID,
  type LastError,
  type NeedsOperatorEntry,
  type OperatorAggregate,
  type OperatorError,
  type OperatorItem,
  type OperatorItemStatus,
  OperatorStatusCollections,
  operatorItemKey,
  type PendingCompletion,
  type RunningEntry,
} from './operator-status.view.js';
