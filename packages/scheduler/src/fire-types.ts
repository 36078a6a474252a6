import type { Actor } from '@demiurge/contracts';
import type { InstanceError } from './instance-ledger.js';
import type { ScheduleDelivery } from './schedule-file.js';

/** What `startSession` gets: everything a host needs to open a fresh session for one fire. */
export interface StartSessionSpec {
  readonly coreId: string;
  readonly title: string;
  /** The principal the fire runs as: the system, named by the scheduler's owner. */
  readonly actor: Actor;
  readonly scheduleId: string;
  readonly dueAt: string;
  readonly instanceId: string;
  readonly taskId: string;
  readonly delivery: ScheduleDelivery | null;
  /** `<core>/<schedule>/<dueAt>`, unique per fire: a host can make session creation idempotent with it. */
  readonly fireKey: string;
}

/** One fire, as the optional `fire` callback sees it (it runs the turn: issue 8/8). */
export interface ScheduledFire {
  readonly coreId: string;
  readonly scheduleId: string;
  readonly dueAt: string;
  readonly instanceId: string;
  readonly taskId: string;
  readonly sessionId: string;
  readonly prompt: string;
  readonly delivery: ScheduleDelivery | null;
  /** The signature the instance was created under. */
  readonly signature: string;
  readonly attempt: number;
  /** Extends the work item's lease; throws `StaleClaimError` when another process took the fire over. */
  heartbeat(): Promise<void>;
}

/** Runs a fire's turn; a thrown error fails the task and the instance. */
export type FireHandler = (fire: ScheduledFire) => Promise<{ summary?: string } | undefined>;

/** What `runDue` did with one claimed `schedule.fire` work item. */
export interface FireResult {
  readonly workId: string;
  readonly attempt: number;
  readonly coreId: string;
  readonly scheduleId: string;
  readonly dueAt: string;
  readonly instanceId: string | null;
  readonly taskId: string | null;
  readonly sessionId: string | null;
  /**
   * `completed`: the fire happened (task submitted; with a `fire` callback, the callback finished).
   * `failed`: the fire failed (the instance and the task say why). `not_fired`: its instance had been
   * retired, so nothing fired. `error`: this attempt threw (`cause`); the claim stays until its lease
   * runs out and it is reclaimed (up to `maxAttempts`).
   */
  readonly outcome: 'completed' | 'failed' | 'not_fired' | 'error';
  readonly error: InstanceError | null;
  readonly cause?: unknown;
}
