export {
  type BoardEntry,
  boardKey,
  boardLanePrefix,
  LOG_TAIL_LINES,
  laneOf,
  type SessionTaskEntry,
  sessionPrefix,
  sessionTaskKey,
  type TaskArtifact,
  type TaskArtifactData,
  TaskBoardCollections,
  type TaskLane,
  type TaskLogLine,
  type TaskProcess,
  type TaskProcessData,
  type TaskStatus,
  type TaskView,
} from './task.view.js';
export { taskBoardProjector } from './task-board.projector.js';
export { type TaskBoardReader, taskBoardReader } from './task-board.reader.js';
