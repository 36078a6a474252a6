import { z } from 'zod';
import { cronProblem, normalizeCron, timezoneProblem } from './cron-spec.js';
import { scheduleSignature } from './signature.js';

/** What a tick does with due times it finds late (see docs/schedules.md). */
export const MissedPolicy = z.enum(['coalesce', 'skip', 'catch_up']);
export type MissedPolicy = z.infer<typeof MissedPolicy>;

/**
 * Where a fire's answer is sent (the delivery runtime's channels); `delivery: operator` is short for
 * `delivery: { channel: operator }`. Without `delivery` the answer is recorded in the fire's session only.
 */
export const ScheduleDelivery = z.preprocess(
  (value) => (typeof value === 'string' ? { channel: value } : value),
  z.strictObject({
    channel: z.enum(['operator', 'webhook']),
    conversation_key: z.string().min(1).optional(),
  }),
);
export type ScheduleDelivery = z.output<typeof ScheduleDelivery>;

/** A schedule id: the file name without `.yaml`. Plain names only. */
export const SCHEDULE_ID_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
const MAX_ID_LENGTH = 64;

/**
 * The contents of `<core>/schedules/<id>.yaml`. Strict: an unknown key is an error.
 *
 * @example
 * ScheduleFile.parse({ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', prompt: 'Summarise my inbox.' });
 */
export const ScheduleFile = z.strictObject({
  cron: z
    .string()
    .trim()
    .min(1)
    .superRefine((cron, ctx) => {
      const problem = cronProblem(cron);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  timezone: z
    .string()
    .trim()
    .min(1)
    .default('UTC')
    .superRefine((tz, ctx) => {
      const problem = timezoneProblem(tz);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  prompt: z.string().trim().min(1),
  delivery: ScheduleDelivery.optional(),
  enabled: z.boolean().default(true),
  missed: MissedPolicy.default('coalesce'),
  catch_up_limit: z.number().int().min(1).max(1000).default(10),
});
export type ScheduleFile = z.input<typeof ScheduleFile>;

/** The firing-relevant fields: what a signature covers and what an instance records. */
export interface ScheduleDefinition {
  readonly cron: string;
  readonly timezone: string;
  readonly prompt: string;
  readonly delivery: ScheduleDelivery | null;
}

/** A loaded, valid schedule. */
export interface Schedule extends ScheduleDefinition {
  /** The file name without `.yaml`. */
  readonly id: string;
  /** The file, relative to the core directory: `schedules/<id>.yaml`. */
  readonly file: string;
  readonly enabled: boolean;
  readonly missed: MissedPolicy;
  readonly catchUpLimit: number;
  /** {@link scheduleSignature} of the definition. */
  readonly signature: string;
}

/** Why a file name is not a schedule id, or undefined when it is one. */
export function scheduleIdProblem(id: string): string | undefined {
  if (!SCHEDULE_ID_PATTERN.test(id)) {
    return `"${id}" is not a schedule id: use lower-case letters, digits, "-" and "_", starting with a letter or digit`;
  }
  if (id.length > MAX_ID_LENGTH) return `"${id}" is longer than ${MAX_ID_LENGTH} characters`;
  return undefined;
}

/** Builds the schedule from its id, file and parsed contents (signature included). */
export function toSchedule(id: string, file: string, parsed: z.output<typeof ScheduleFile>): Schedule {
  const definition: ScheduleDefinition = {
    cron: normalizeCron(parsed.cron),
    timezone: parsed.timezone,
    prompt: parsed.prompt,
    delivery: parsed.delivery ?? null,
  };
  return {
    id,
    file,
    ...definition,
    enabled: parsed.enabled,
    missed: parsed.missed,
    catchUpLimit: parsed.catch_up_limit,
    signature: scheduleSignature(definition),
  };
}
