import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/**
 * A lifecycle machine refused an event: it names the aggregate, the stream, the state, the
 * refused event and the events the state allows, so a person can act on it.
 * @example
 * try { assertTransition(taskLifecycle, 'deleted', 'task.started', taskId); }
 * catch (e) { if (e instanceof IllegalTransitionError) console.log(e.allowed); } // ['task.archived']
 */
export class IllegalTransitionError extends DemiurgeError {
  override readonly name = 'IllegalTransitionError';
  readonly code = ErrorCode.IllegalTransition;
  constructor(
    readonly aggregate: string,
    readonly streamId: string | undefined,
    readonly from: string,
    readonly event: string,
    readonly allowed: readonly string[],
    options?: { cause?: unknown; unknownEvent?: boolean },
  ) {
    super(describeRefusal(aggregate, streamId, from, event, allowed, options?.unknownEvent ?? false), options);
  }
}

/** "task tsk_… is deleted; task.started is not allowed; allowed: task.archived". */
export function describeRefusal(
  aggregate: string,
  streamId: string | undefined,
  from: string,
  event: string,
  allowed: readonly string[],
  unknownEvent = false,
): string {
  const subject = streamId ? `${aggregate} ${streamId}` : aggregate;
  const where = from === 'none' ? `${subject} does not exist yet` : `${subject} is ${from}`;
  const what = unknownEvent ? `${event} is not a ${aggregate} event` : `${event} is not allowed`;
  const options = allowed.length > 0 ? allowed.join(', ') : `nothing (${from} is final)`;
  return `${where}; ${what}; allowed: ${options}`;
}
