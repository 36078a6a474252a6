import { defineProjector, type Projector } from '@demiurge/event-store';
import { rebuildProjectors } from './fixtures.js';

/** A projector that handles none of the log's events: it must still be current after every commit. */
const idleProjector = defineProjector({
  name: 'bench-idle',
  version: 1,
  handles: ['bench.never'],
  apply: () => {},
});

/** The open benchmark's projectors: the rebuild bench's three and one that handles nothing in the log. */
export const openBenchProjectors: readonly Projector[] = [...rebuildProjectors, idleProjector];
