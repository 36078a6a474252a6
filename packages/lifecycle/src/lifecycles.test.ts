import { domainEvents } from '@demiurge/contracts';
import { createInMemoryEventStore } from '@demiurge/event-store';
import { getShortestPaths } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import { sampleEvents } from '../test/support.js';
import { AGGREGATE_IDS, validData } from '../test/valid-data.js';
import {
  type Lifecycle,
  type LifecycleEvent,
  lifecycleFor,
  lifecycles,
  nextState,
  taskLifecycle,
  verifyLog,
} from './index.js';

describe('lifecycles', () => {
  it('cover every domain event, and every machine event is a registered domain event', () => {
    const handled = new Set<string>(lifecycles.flatMap((l) => l.events));
    expect(domainEvents.types.filter((type) => !handled.has(type))).toEqual([]);
    expect([...handled].filter((type) => !domainEvents.has(type))).toEqual([]);
  });

  it('have one machine per stream type, found by lifecycleFor', () => {
    expect(new Set(lifecycles.map((l) => l.streamType)).size).toBe(lifecycles.length);
    expect(lifecycleFor('task')).toBe(taskLifecycle);
    expect(lifecycleFor('artifact')).toBeUndefined();
  });

  it.each(lifecycles.map((l: Lifecycle) => [l.streamType, l] as const))(
    '%s: every edge, with schema-valid data, appends through a validating store and verifies clean',
    async (_, lifecycle) => {
      const store = createInMemoryEventStore();
      const samples = sampleEvents(lifecycle);
      const paths = getShortestPaths(lifecycle.machine, { events: samples });
      let streams = 0;
      for (const path of paths) {
        const prefix = path.steps.slice(1).map((step) => step.event as LifecycleEvent);
        for (const event of samples) {
          if (nextState(lifecycle, path.state.value as string, event) === undefined) continue;
          // One stream per edge; its id must still be the aggregate id the data names, so streams differ by type suffix.
          const streamId = `${AGGREGATE_IDS[lifecycle.streamType]}#${streams++}`;
          await store.append({
            streamType: lifecycle.streamType,
            streamId,
            expectedVersion: 'no_stream',
            events: [...prefix, event].map((e) => ({
              type: e.type,
              data: validData(lifecycle.streamType, e.type, e.data),
            })),
          });
        }
      }
      expect(streams).toBeGreaterThan(0);
      const report = await verifyLog(store.iterate());
      expect(report.violations).toEqual([]);
      expect(report.streams).toBe(streams);
      await store.close();
    },
  );
});
