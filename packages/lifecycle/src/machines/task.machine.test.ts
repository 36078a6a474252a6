import { describe, expect, it } from 'vitest';
import { allowedEvents, nextState, transitionTable } from '../index.js';
import { taskLifecycle } from './task.machine.js';

describe('task machine', () => {
  it('has the seed paths, plus cancel before start, active → failed → archived, and cancel or fail while waiting or blocked', () => {
    const moves = transitionTable(taskLifecycle)
      .filter((row) => row.kind !== 'stay')
      .map((row) => `${row.from} -${row.event}-> ${row.to}`);
    expect(moves.sort()).toEqual(
      [
        'none -task.submitted-> created',
        'created -task.started-> active',
        'created -task.cancelled-> cancelled',
        'active -task.completed-> completed',
        'active -task.blocked-> blocked',
        'blocked -task.resumed-> active',
        'active -task.waiting-> waiting',
        'waiting -task.resumed-> active',
        'active -task.cancelled-> cancelled',
        'active -task.failed-> failed',
        'completed -task.archived-> archived',
        'cancelled -task.deleted-> deleted',
        'cancelled -task.archived-> archived',
        'deleted -task.archived-> archived',
        'failed -task.archived-> archived',
        'waiting -task.cancelled-> cancelled',
        'waiting -task.failed-> failed',
        'blocked -task.cancelled-> cancelled',
        'blocked -task.failed-> failed',
      ].sort(),
    );
  });

  it('records logs, process facts, artifacts and completion notices without moving the task', () => {
    const stays = transitionTable(taskLifecycle).filter((row) => row.kind === 'stay');
    expect(new Set(stays.map((row) => row.event))).toEqual(
      new Set([
        'task.log',
        'task.process_started',
        'task.artifact_recorded',
        'task.completion_ready',
        'task.completion_acknowledged',
      ]),
    );
    expect(stays.filter((row) => row.event === 'task.process_started').map((row) => row.from)).toEqual(['active']);
    expect(stays.filter((row) => row.event === 'task.log').map((row) => row.from)).toEqual([
      'created',
      'active',
      'waiting',
      'blocked',
    ]);
  });

  it('lets nothing leave deleted except archived, and nothing leave archived', () => {
    expect(allowedEvents(taskLifecycle, 'deleted')).toEqual(['task.archived']);
    expect(allowedEvents(taskLifecycle, 'archived')).toEqual([]);
    expect(nextState(taskLifecycle, 'deleted', 'task.resumed')).toBeUndefined();
    expect(nextState(taskLifecycle, 'deleted', 'task.started')).toBeUndefined();
  });

  it('never takes a cancelled task back to active', () => {
    for (const type of taskLifecycle.events) {
      expect(['created', 'active', 'waiting', 'blocked']).not.toContain(nextState(taskLifecycle, 'cancelled', type));
    }
  });
});
