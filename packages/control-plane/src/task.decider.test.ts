import type { NewEvent } from '@demiurge/contracts';
import { IllegalTransitionError } from '@demiurge/lifecycle';
import { deciderSpecification } from '@demiurge/lifecycle/testing';
import { describe, it } from 'vitest';
import { completionWorkId } from './completion-notices.js';
import { NotFoundError, NotResumableError } from './errors.js';
import { taskDecider } from './task.decider.js';

const taskId = 'tsk_01JD5Y7Q6N0000000000000000';
const sessionId = 'ses_01JD5Y7Q6N0000000000000000';
const finalNotice = completionWorkId(taskId);
const spec = deciderSpecification(taskDecider({ noticeWorkId: () => 'wrk_block_1' }), { streamType: 'task' });

const e = (type: string, data: Record<string, unknown> = {}): NewEvent => ({ type, data: { taskId, ...data } });
const submitted = (extra: Record<string, unknown> = {}) =>
  e('task.submitted', { sessionId, kind: 'terminal.exec', title: 'ls', ...extra });
const started = e('task.started', { worker: 'w1' });
const ready = (outcome: string, workId = finalNotice) => e('task.completion_ready', { outcome, workId });
const cancelled = e('task.cancelled', { reason: 'stop' });
const deleted = e('task.deleted');
const to = { taskId, sessionId };

describe('task decider: the worker commands', () => {
  it('start, wait, log, resume: the task moves, no notice', () => {
    spec
      .given([submitted()])
      .when({ type: 'start', ...to, worker: 'w1' })
      .thenAppends([started]);
    const waiting = e('task.waiting', { reason: 'child' });
    spec
      .given([submitted(), started])
      .when({ type: 'wait', ...to, reason: 'child' })
      .thenAppends([waiting]);
    spec
      .given([submitted(), started, waiting])
      .when({ type: 'resume', ...to })
      .thenAppends([e('task.resumed')]);
    spec
      .given([submitted()])
      .when({ type: 'log', ...to, stream: 'stdout', text: 'hi' })
      .thenAppends([e('task.log', { stream: 'stdout', text: 'hi' })]);
  });

  it('complete and fail end the task with its one final notice, unless its notify policy is silent', () => {
    spec
      .given([submitted(), started])
      .when({ type: 'complete', ...to, summary: 'ok', exitCode: 0 })
      .thenAppends([e('task.completed', { summary: 'ok', exitCode: 0 }), ready('completed')]);
    spec
      .given([submitted(), started])
      .when({ type: 'fail', ...to, error: { code: 'exit', message: 'exit 2' }, exitCode: 2 })
      .thenAppends([e('task.failed', { error: { code: 'exit', message: 'exit 2' }, exitCode: 2 }), ready('failed')]);
    spec
      .given([submitted({ notifyPolicy: 'silent' }), started])
      .when({ type: 'complete', ...to })
      .thenAppends([e('task.completed')]);
  });

  it('refuses what the machine refuses: starting twice, completing a task never started', () => {
    spec
      .given([submitted(), started])
      .when({ type: 'start', ...to, worker: 'w2' })
      .thenThrows(IllegalTransitionError);
    spec
      .given([submitted()])
      .when({ type: 'complete', ...to })
      .thenThrows(IllegalTransitionError);
  });
});

describe('task decider: the operator commands', () => {
  it('cancel ends the task with its notice; a second cancel (or after delete) appends nothing; a finished task cannot be cancelled', () => {
    spec
      .given([submitted()])
      .when({ type: 'cancel', ...to, reason: 'stop' })
      .thenAppends([cancelled, ready('cancelled')]);
    spec
      .given([submitted(), cancelled])
      .when({ type: 'cancel', ...to, reason: 'again' })
      .thenNothing();
    spec
      .given([submitted(), cancelled, deleted])
      .when({ type: 'cancel', ...to, reason: 'again' })
      .thenNothing();
    spec
      .given([submitted(), started, e('task.completed')])
      .when({ type: 'cancel', ...to, reason: 'too late' })
      .thenThrows(IllegalTransitionError);
  });

  it('delete and archive once; repeats append nothing; an active task cannot be deleted', () => {
    spec
      .given([submitted(), cancelled])
      .when({ type: 'delete', ...to, reason: 'cleanup' })
      .thenAppends([e('task.deleted', { reason: 'cleanup' })]);
    spec
      .given([submitted(), cancelled, deleted])
      .when({ type: 'delete', ...to })
      .thenNothing();
    spec
      .given([submitted(), started])
      .when({ type: 'delete', ...to })
      .thenThrows(IllegalTransitionError);
    spec
      .given([submitted(), cancelled])
      .when({ type: 'archive', ...to })
      .thenAppends([e('task.archived')]);
    spec
      .given([submitted(), cancelled, e('task.archived')])
      .when({ type: 'archive', ...to })
      .thenNothing();
  });

  it('block notifies with a notice of its own; a task blocked as not resumable cannot be resumed', () => {
    const blocked = e('task.blocked', { reason: 'needs approval', resumable: false });
    spec
      .given([submitted(), started])
      .when({ type: 'block', ...to, reason: 'needs approval', resumable: false })
      .thenAppends([blocked, ready('blocked', 'wrk_block_1')]);
    spec
      .given([submitted(), started, blocked])
      .when({ type: 'resume', ...to })
      .thenThrows(NotResumableError);
    spec
      .given([submitted(), cancelled, deleted])
      .when({ type: 'resume', ...to })
      .thenThrows(IllegalTransitionError);
  });

  it("another session's task, or one never submitted, is not found", () => {
    spec
      .given([submitted({ sessionId: 'ses_01JD5Y7Q6N0000000000000001' })])
      .when({ type: 'cancel', ...to, reason: 'x' })
      .thenThrows(NotFoundError);
    spec
      .given([])
      .when({ type: 'start', ...to, worker: 'w' })
      .thenThrows(NotFoundError);
  });
});
