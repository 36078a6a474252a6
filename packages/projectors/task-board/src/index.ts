export {
  type BoardEntry,
  boardKey,
  boardLanePrefix,
  LOG_TAIL_LINES,
  laneOf,
  type SessionTaskEntry,
  sessionPrefix,
  sessionTaskKey,
  TaskBoardCollections,
  type TaskLane,
  type TaskLogLine,
  type TaskStatus,
  type TaskView,
} from './task.view.js';
export { taskBoardProjector } from './task-board.projector.js';
