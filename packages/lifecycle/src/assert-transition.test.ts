import { TaskLog } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { type AnyStateMachine, setup } from 'xstate';
import {
  assertTransition,
  canTransition,
  defineLifecycle,
  IllegalTransitionError,
  nextState,
  taskLifecycle,
  workLifecycle,
} from './index.js';

const taskId = 'tsk_01JD5Y7Q6N0000000000000000';

describe('assertTransition', () => {
  it('returns the next state of an allowed event', () => {
    expect(assertTransition(taskLifecycle, 'active', 'task.blocked', taskId)).toBe('blocked');
    expect(assertTransition(taskLifecycle, 'active', { type: 'task.log', data: { text: 'x' } })).toBe('active');
  });

  it('throws an error a person can act on, and a client can read', () => {
    const error = (() => {
      try {
        assertTransition(taskLifecycle, 'deleted', 'task.started', taskId);
      } catch (e) {
        return e as IllegalTransitionError;
      }
    })();
    expect(error).toBeInstanceOf(IllegalTransitionError);
    expect(error?.message).toBe(`task ${taskId} is deleted; task.started is not allowed; allowed: task.archived`);
    expect(error).toMatchObject({
      name: 'IllegalTransitionError',
      aggregate: 'task',
      streamId: taskId,
      from: 'deleted',
      event: 'task.started',
      allowed: ['task.archived'],
    });
    expect(error?.toJSON()).toEqual({ code: 'illegal_transition', message: error?.message });
  });

  it('says when an aggregate does not exist yet, is final, or the event is not its own', () => {
    expect(() => assertTransition(workLifecycle, 'none', 'work.claimed', 'wrk_1')).toThrow(
      'work item wrk_1 does not exist yet; work.claimed is not allowed; allowed: work.enqueued',
    );
    expect(() => assertTransition(workLifecycle, 'acknowledged', 'work.claimed')).toThrow(
      'work item is acknowledged; work.claimed is not allowed; allowed: nothing (acknowledged is final)',
    );
    expect(() => assertTransition(taskLifecycle, 'none', { type: 'run.started' as 'task.started' })).toThrow(
      'run.started is not a task event',
    );
  });

  it('refuses a state the machine does not have', () => {
    expect(() => nextState(taskLifecycle, 'running' as 'active', 'task.started')).toThrow(RangeError);
  });

  it('answers with or without the data a guard needs', () => {
    expect(canTransition(workLifecycle, 'running', 'work.failed')).toBe(true);
    expect(nextState(workLifecycle, 'running', 'work.failed')).toBe('failed');
  });
});

describe('defineLifecycle', () => {
  // Any schema will do: defineLifecycle reads only the vocabulary's types.
  const Switched = { ...TaskLog, type: 'lamp.switched' as const };
  const Installed = { ...TaskLog, type: 'lamp.installed' as const };
  const base = { aggregate: 'lamp', streamType: 'lamp', title: 'Lamp', summary: '', invariants: [] };
  const machine = (config: object) => setup({}).createMachine(config as never) as unknown as AnyStateMachine;

  it('checks the machine against its vocabulary', () => {
    const lamp = machine({
      id: 'lamp',
      initial: 'none',
      states: { none: { on: { 'lamp.installed': 'off' } }, off: { on: { 'lamp.switched': 'on' } }, on: {} },
    });
    expect(defineLifecycle({ ...base, machine: lamp, vocabulary: [Installed, Switched] }).states).toEqual([
      'none',
      'off',
      'on',
    ]);
    expect(() => defineLifecycle({ ...base, machine: lamp, vocabulary: [Installed] })).toThrow(
      'not in the vocabulary: lamp.switched',
    );
    expect(() =>
      defineLifecycle({
        ...base,
        machine: lamp,
        vocabulary: [Installed, Switched, { ...Switched, type: 'lamp.broken' }],
      }),
    ).toThrow('never handled: lamp.broken');
  });

  it('refuses a machine that does not start in none, or has nested states', () => {
    const off = machine({ id: 'lamp', initial: 'off', states: { off: { on: { 'lamp.installed': 'off' } } } });
    expect(() => defineLifecycle({ ...base, machine: off, vocabulary: [Installed] })).toThrow('must start in "none"');
    const nested = machine({
      id: 'lamp',
      initial: 'none',
      states: { none: { on: { 'lamp.installed': 'lit' } }, lit: { initial: 'a', states: { a: {} } } },
    });
    expect(() => defineLifecycle({ ...base, machine: nested, vocabulary: [Installed] })).toThrow('is nested');
  });
});
