import { type ProjectionSource, type TypedCollection, typedCollection } from '@demiurge/event-store';
import {
  type BoardEntry,
  type SessionTaskEntry,
  sessionPrefix,
  TaskBoardCollections,
  type TaskView,
} from './task.view.js';
import { taskBoardProjector } from './task-board.projector.js';

/** The `task-board` read model, typed. */
export interface TaskBoardReader {
  /** One task (deleted ones too, for audit), or undefined. */
  get(taskId: string): Promise<TaskView | undefined>;
  /** Every task, in id order. */
  all(): Promise<TaskView[]>;
  /** Tasks in a lane, by session then lane; `sessionId` narrows to one session. */
  board(sessionId?: string): Promise<BoardEntry[]>;
  /** Every task of a session (hidden ones flagged), in id order. */
  ofSession(sessionId: string): Promise<SessionTaskEntry[]>;
  readonly collections: {
    readonly tasks: TypedCollection<TaskView>;
    readonly board: TypedCollection<BoardEntry>;
    readonly bySession: TypedCollection<SessionTaskEntry>;
  };
}

/**
 * The typed reader of the `task-board` projection.
 * @example
 * const task = await taskBoardReader(store).get(taskId);
 */
export function taskBoardReader(store: ProjectionSource): TaskBoardReader {
  const reader = store.projection(taskBoardProjector.name);
  const tasks = typedCollection<TaskView>(reader, TaskBoardCollections.tasks);
  const board = typedCollection<BoardEntry>(reader, TaskBoardCollections.board);
  const bySession = typedCollection<SessionTaskEntry>(reader, TaskBoardCollections.bySession);
  return {
    get: (taskId) => tasks.get(taskId),
    all: () => tasks.list(),
    board: (sessionId) => board.list(sessionId === undefined ? {} : { prefix: sessionPrefix(sessionId) }),
    ofSession: (sessionId) => bySession.list({ prefix: sessionPrefix(sessionId) }),
    collections: { tasks, board, bySession },
  };
}
