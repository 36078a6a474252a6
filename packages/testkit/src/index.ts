// The machine walks (random walks through each lifecycle machine with valid event data) and the decider
// specification, from @demiurge/lifecycle's test helpers: one package for users' property tests.

// The crash-point sweep (docs/crash-sweep.md): every store commit of a scenario, a crash right before and after.
export {
  type CheckProblem,
  type CrashPhase,
  type CrashPoint,
  type CrashPointDriver,
  formatCrashPoint,
  formatSweepResult,
  parseCrashPoint,
  planCrashPoints,
  type SweepOptions,
  type SweepProblem,
  type SweepResult,
  sweepCrashPoints,
} from '@demiurge/crash-sweep';
export {
  type DeliveryModel,
  deciderSpecification,
  deliveryWalk,
  edgeKey,
  MachineWalk,
  type SpecifiedDecider,
  steps,
  type TaskModel,
  taskWalk,
  type WalkSpec,
  type WorkModel,
  workWalk,
} from '@demiurge/lifecycle/testing';
export {
  renderSimulateReport,
  type SimFailure,
  type SimRunReport,
  type SimulateOptions,
  type SimulateReport,
  simulate,
  simulateSeed,
} from './batch.js';
export {
  type Acknowledged,
  type CheckedStore,
  logHash,
  RESUMED_FROM_PAUSE,
  rebuildDifferences,
  StepChecker,
} from './checks.js';
export { checkInvariants, Invariant, type InvariantFinding } from './invariants.js';
export { PausedRunsCheck } from './pause-check.js';
export {
  describeDifference,
  diffProjection,
  diffValues,
  type FieldDifference,
  type ProjectionDifference,
  type ProjectionDump,
} from './projection-diff.js';
export {
  actionsOfSeed,
  describeAction,
  type ProcessFault,
  type ProviderFault,
  type SimAction,
  type SinkFault,
  scenarioArb,
  simActionArb,
  type ToolFault,
} from './scenario.js';
export { VirtualTimers } from './sim-clock.js';
export { SIM_EPOCH, type SimStore } from './sim-host.js';
export { planText, SIM_TOOL, type SimBug, SimWorld, SLOW_TIMEOUT_S, type TurnPlan } from './sim-world.js';
export { runScenario, type ScenarioResult, type SimulatorOptions } from './simulator.js';
