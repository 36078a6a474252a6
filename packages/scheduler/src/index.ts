export {
  COUNT_CAP,
  type CronSpec,
  compileCron,
  cronProblem,
  normalizeCron,
  timezoneProblem,
  wallClock,
} from './cron-spec.js';
export { ScheduleFileError, SchedulerProjectorMissingError } from './errors.js';
export type { FireHandler, FireResult, ScheduledFire, StartSessionSpec } from './fire-types.js';
export type { InstanceError } from './instance-ledger.js';
export { type LoadedSchedules, loadSchedules, parseScheduleFile, SCHEDULES_DIR } from './load-schedules.js';
export { type DuePlan, type DueTimes, missedKeep, planDue } from './missed-policy.js';
export { schedulerProjectors } from './projectors.js';
export {
  MissedPolicy,
  SCHEDULE_ID_PATTERN,
  type Schedule,
  type ScheduleDefinition,
  ScheduleDelivery,
  ScheduleFile,
  scheduleIdProblem,
} from './schedule-file.js';
export {
  instanceKey,
  type OpenInstance,
  ScheduleInstanceCollections,
  ScheduleInstanceMeta,
  type ScheduleInstanceStatus,
  type ScheduleInstanceView,
  type ScheduleSummary,
  scheduleKey,
  slotKey,
} from './schedule-instance.view.js';
export { scheduleInstancesProjector } from './schedule-instances.projector.js';
export { type ScheduleInstancesReader, scheduleInstancesReader } from './schedule-instances.reader.js';
export {
  SchedulerRuntime,
  type SchedulerRuntimeOptions,
  type ScheduleSource,
  type TickReport,
  type UpcomingFires,
} from './scheduler-runtime.js';
export { scheduleEventId, scheduleSignature } from './signature.js';
export { RETIRED_CODES, type TickAction, type TickEntry } from './tick-schedule.js';
