import type { IdGenerator } from '@demiurge/contracts';
import { type WorkEventType, type WorkState, workLifecycle } from '../machines/work.machine.js';
import type { WalkSpec } from './machine-walk.js';

/**
 * Valid data for every work event, for {@link MachineWalk}: shaped like the zod schemas of
 * contracts' work.events.ts, guarded variants included (work.failed with and without retryAt,
 * every work.resolved decision), times sometimes without milliseconds.
 */

export const WORK_KINDS = ['delivery.send', 'schedule.fire', 'task.completion'] as const;

/** What the walk knows of one work item. */
export interface WorkModel {
  readonly workId: string;
  state: WorkState;
  kind: string;
  claims: number;
  claimToken: string | null;
}

/** A time `ms` after `now`, sometimes written without milliseconds (the schema accepts any precision). */
export function timeAfter(now: number, ms: number, variant: number): string {
  const iso = new Date(now + ms).toISOString();
  return variant % 3 === 0 ? iso.replace(/\.\d{3}Z$/, 'Z') : iso;
}

const DECISIONS = ['sent', 'failed', 'retry'] as const;

function workData(m: WorkModel, type: WorkEventType, v: number, now: number): Record<string, unknown> {
  const { workId } = m;
  const claimToken = m.claimToken ?? 'no-claim';
  const odd = v % 2 === 1;
  switch (type) {
    case 'work.enqueued':
      return {
        workId,
        kind: WORK_KINDS[v % WORK_KINDS.length],
        subjectId: `subject-${v % 5}`,
        ...(odd ? { payload: { text: `p${v % 7}`, n: v % 3 } } : {}),
        ...(v % 4 < 2 ? { notBefore: timeAfter(now, 500 + (v % 4000), v >> 2) } : {}),
      };
    case 'work.claimed':
      return {
        workId,
        claimToken: `${workId}:${m.claims + 1}`,
        attempt: m.claims + 1,
        owner: `worker-${v % 2}`,
        leaseUntil: timeAfter(now, 30_000, v >> 1),
      };
    case 'work.running':
    case 'work.sending':
      return { workId, claimToken };
    case 'work.heartbeat':
      return { workId, claimToken, leaseUntil: timeAfter(now, 60_000 + (v % 1000), v >> 1) };
    case 'work.succeeded':
      return { workId, claimToken, ...(odd ? { externalRef: `ext-${v % 100}` } : {}) };
    case 'work.failed':
      return {
        workId,
        claimToken,
        error: { code: `e${v % 3}`, message: 'it broke' },
        ...(odd ? { retryAt: timeAfter(now, 5_000 + (v % 10_000), v >> 1) } : {}),
      };
    case 'work.cancelled':
      return { workId, reason: 'no longer needed' };
    case 'work.unknown':
      return { workId, claimToken, reason: 'crashed mid-send' };
    case 'work.lease_expired':
      return { workId, claimToken, attempt: m.claims };
    case 'work.acknowledged':
      return { workId, ...(odd && m.claimToken ? { claimToken } : {}) };
    case 'work.resolved': {
      const decision = DECISIONS[v % DECISIONS.length]!;
      return {
        workId,
        decision,
        ...(decision === 'retry' && (v >> 2) % 2 === 0 ? { retryAt: timeAfter(now, 2_000, v >> 3) } : {}),
        ...((v >> 1) % 2 === 0 ? { note: 'checked the channel' } : {}),
      };
    }
    case 'work.corrupt':
      return { workId, detail: 'payload does not parse' };
  }
}

export const workWalk: WalkSpec<WorkState, WorkEventType, WorkModel> = {
  lifecycle: workLifecycle,
  streamType: 'work',
  create: (ids: IdGenerator) => ({ workId: ids.next('wrk'), state: 'none', kind: '', claims: 0, claimToken: null }),
  streamId: (m) => m.workId,
  data: workData,
  taken(m, type, data) {
    if (type === 'work.enqueued') m.kind = String(data.kind);
    if (type === 'work.claimed') {
      m.claims++;
      m.claimToken = String(data.claimToken);
    }
  },
};
