export { deciderSpecification, recordGiven, type SpecifiedDecider } from './decider-specification.js';
export { type DeliveryModel, deliveryWalk } from './delivery-walk.js';
export {
  appendStreams,
  edgeKey,
  MachineWalk,
  type Step,
  steps,
  type WalkAppendStream,
  type WalkEvent,
  type WalkSpec,
} from './machine-walk.js';
export { type TaskModel, taskWalk } from './task-walk.js';
export { type WorkModel, workWalk } from './work-walk.js';
