// The projection comparison lives in the test kit (the simulator compares after every step); `verify` reads it from there.
export {
  describeDifference,
  diffProjection,
  diffValues,
  type FieldDifference,
  type ProjectionDifference,
  type ProjectionDump,
} from '@demiurge/testkit';
