export {
  type ConformanceContext,
  created,
  describeEventStoreConformance,
  incremented,
} from './conformance.js';
export {
  counterProjector,
  notesProjector,
  poisonProjector,
  TestCreated,
  TestIncremented,
  TestNoted,
  testEventRegistry,
} from './fixtures.js';
export type { EventStoreHarness, OpenStoreOptions } from './harness.js';
