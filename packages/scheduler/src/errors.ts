import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/**
 * One schedule file that cannot be used: bad YAML, an unknown or invalid field, a cron that does not
 * parse, a time zone that does not exist. Names the file, the field (null for the file as a whole) and
 * the line where the YAML parser gives one. Other schedules load regardless.
 *
 * @example
 * const { errors } = await loadSchedules(coreDir);
 * for (const e of errors) console.error(e.message); // schedules/daily.yaml:1: cron: Invalid value for minute: 61
 */
export class ScheduleFileError extends DemiurgeError {
  override readonly name = 'ScheduleFileError';
  readonly code = ErrorCode.InvalidSpec;
  constructor(
    /** The file's path as given to the loader (relative to the core directory). */
    readonly file: string,
    /** The schedule id the file name gives (even when it is not a valid id). */
    readonly scheduleId: string,
    /** The field at fault (`cron`, `delivery.channel`), or null for the file itself. */
    readonly field: string | null,
    /** 1-based line, when known. */
    readonly line: number | null,
    readonly detail: string,
  ) {
    super(`${file}${line === null ? '' : `:${line}`}: ${field === null ? '' : `${field}: `}${detail}`);
  }
}

/** The store the scheduler was given does not run the `schedule-instances` projector. */
export class SchedulerProjectorMissingError extends DemiurgeError {
  override readonly name = 'SchedulerProjectorMissingError';
  readonly code = ErrorCode.UnknownProjector;
  constructor(readonly projector: string) {
    super(
      `the event store has no "${projector}" projector: open it with schedulerProjectors ` +
        '(or add scheduleInstancesProjector to its projectors) in every process that schedules',
    );
  }
}
