import { describe, expect, it } from 'vitest';
import { createActor, setup } from 'xstate';
import { defineLifecycle } from './define-lifecycle.js';
import { isLazyMachine, lazyMachine, lazySetup, realMachine } from './lazy-machine.js';
import { lifecycles } from './lifecycles.js';
import { taskLifecycle, taskMachine } from './machines/task.machine.js';
import { allowedEvents, nextState } from './transitions.js';

const lampConfig = {
  id: 'lamp',
  initial: 'none',
  states: { none: { on: { 'lamp.installed': 'off' } }, off: { on: { 'lamp.switched': 'on' } }, on: {} },
} as const;
const Installed = { type: 'lamp.installed' as const, schemaVersion: 1, description: '', data: undefined as never };
const Switched = { ...Installed, type: 'lamp.switched' as const };
const base = { aggregate: 'lamp', streamType: 'lamp', title: 'Lamp', summary: '', invariants: [] };

describe('lazy machines', () => {
  it('are built on first use, once, and answer as the machine itself', () => {
    let builds = 0;
    const lamp = lazyMachine(() => {
      builds++;
      return setup({}).createMachine(lampConfig);
    });
    expect(builds).toBe(0);
    expect(isLazyMachine(lamp)).toBe(true);
    expect(Object.keys(lamp.root.states)).toEqual(['none', 'off', 'on']);
    expect(realMachine(lamp)).toBe(realMachine(lamp));
    expect(realMachine(lamp).root).toBe(lamp.root);
    const actor = createActor(lamp).start();
    actor.send({ type: 'lamp.installed' });
    expect(actor.getSnapshot().value).toBe('off');
    expect(builds).toBe(1);
  });

  it('a lifecycle of a lazy machine builds and checks it on first use', () => {
    let builds = 0;
    const lazy = lazyMachine(() => {
      builds++;
      return setup({}).createMachine(lampConfig);
    });
    const lamp = defineLifecycle({ ...base, machine: lazy, vocabulary: [Installed, Switched] });
    expect(builds).toBe(0);
    expect(lamp.events).toEqual(['lamp.installed', 'lamp.switched']);
    expect(nextState(lamp, 'off', 'lamp.switched')).toBe('on');
    expect(lamp.states).toEqual(['none', 'off', 'on']);
    expect(lamp.creationEvents).toEqual(['lamp.installed']);
    expect(isLazyMachine(lamp.machine)).toBe(false);
    expect(builds).toBe(1);
    const wrong = defineLifecycle({
      ...base,
      machine: lazyMachine(() => setup({}).createMachine(lampConfig)),
      vocabulary: [Installed],
    });
    expect(() => wrong.states).toThrow('not in the vocabulary: lamp.switched');
  });

  it('every lifecycle machine is declared with lazySetup and passes the vocabulary check', () => {
    expect(isLazyMachine(taskMachine)).toBe(true);
    expect(realMachine(taskMachine)).toBe(taskLifecycle.machine);
    expect(lazySetup({}).createMachine(lampConfig).id).toBe('lamp');
    for (const lifecycle of lifecycles) {
      expect(lifecycle.states[0]).toBe('none');
      expect(lifecycle.creationEvents.length).toBeGreaterThan(0);
    }
    expect(allowedEvents(taskLifecycle, 'deleted')).toEqual(['task.archived']);
  });
});
