import { type Clock, type EventMeta, findEvent, type IdGenerator, IdPrefix, WorkId } from '@demiurge/contracts';
import {
  type AppendOptions,
  type AppendStream,
  commandLoop,
  type EventStore,
  StreamVersionConflictError,
  streamAppend,
} from '@demiurge/event-store';
import { workLifecycle } from '@demiurge/lifecycle';
import { leasedKey, type WorkItemView, waitingKey, workItemsReader } from '@demiurge/projector-work-items';
import { z } from 'zod';
import { NotClaimableError, NotFoundError, parseSpec } from './errors.js';
import { defaultWorkKinds, type KindRegistry } from './kinds.js';
import { claimDueUnderLock, claimsUnderLock } from './locked-claims.js';
import { decideWork, type WorkCommand } from './work.decider.js';
import { afterAppend, loadWork, type WorkAggregate } from './work-aggregate.js';
import { type ClaimContext, claimDue, decideClaim, type WorkClaim } from './work-claims.js';
import { expireLease, setAsideIfCorrupt } from './work-recovery.js';

export type { WorkClaim } from './work-claims.js';

export const EnqueueSpec = z.object({
  workId: WorkId.optional(),
  kind: z.string().min(1),
  subjectId: z.string().min(1),
  payload: z.json().optional(),
  notBefore: z.iso.datetime().optional(),
});
export type EnqueueSpec = z.input<typeof EnqueueSpec>;

export interface DurableWorkOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** Who claims: written on every claim. */
  readonly owner: string;
  readonly kinds?: KindRegistry;
  /** Lease length when a call does not give one. Default 30 s. */
  readonly leaseMs?: number;
  readonly meta?: Partial<EventMeta>;
}

export interface RecoverReport {
  /** Expired claimed/running items rescheduled. */
  readonly rescheduled: number;
  /** Expired sending items marked unknown (never re-sent automatically). */
  readonly unknown: number;
  /** Due items whose payload cannot be read, set aside. */
  readonly corrupt: number;
}

const WORK = workLifecycle.streamType;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The lease/ack seam for unfinished host work (seed 003 DurableWorkRuntime). Every state change is a
 * `work.*` event checked by the work machine; every claim carries a fresh fencing token and attempt
 * number, and every later write must present the current token ({@link StaleClaimError}).
 *
 * @example
 * const work = new DurableWorkRuntime({ store, clock, ids, owner: 'host-1' });
 * await work.enqueue({ kind: 'task.completion', subjectId: taskId, payload: { taskId } });
 * for (const claim of await work.claimDue({ kind: 'task.completion', limit: 10 })) await work.succeed(claim);
 */
export class DurableWorkRuntime {
  readonly kinds: KindRegistry;
  /**
   * What this runtime's `claimDue` calls came to: items claimed, and claim races lost (another claimer
   * committed its claim of the item first; the item was skipped). For operators and tests of several hosts.
   */
  readonly claimStats = { claimed: 0, racesLost: 0 };
  private readonly leaseMs: number;
  /**
   * Each live claim this runtime made or last wrote with, and the item as that write left it: the claim's next
   * command decides from it first (no read of the stream), appending with its version as the expected version.
   */
  private readonly written = new WeakMap<WorkClaim, WorkAggregate | (() => WorkAggregate)>();

  constructor(private readonly options: DurableWorkOptions) {
    this.kinds = options.kinds ?? defaultWorkKinds;
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  /** Who claims (this process). */
  get owner(): string {
    return this.options.owner;
  }

  /** The events and stream that enqueue work, for callers that append them with other streams. */
  enqueueStream(spec: EnqueueSpec): { workId: string; stream: AppendStream } {
    const parsed = parseSpec('work item', EnqueueSpec, spec);
    parseSpec(`${parsed.kind} payload`, this.kinds.schema(parsed.kind), parsed.payload, ['payload']);
    const workId = parsed.workId ?? this.options.ids.next(IdPrefix.work);
    const data = { ...parsed, workId };
    return {
      workId,
      stream: {
        streamType: WORK,
        streamId: workId,
        expectedVersion: 'no_stream',
        events: [{ type: 'work.enqueued', data }],
      },
    };
  }

  /** Enqueues work; idempotent by work id (an existing item is left as it is: `created: false`). */
  async enqueue(spec: EnqueueSpec, also: readonly AppendStream[] = []): Promise<{ workId: string; created: boolean }> {
    const { workId, stream } = this.enqueueStream(spec);
    if ((await this.options.store.streamVersion(workId)) > 0) return { workId, created: false };
    try {
      await this.options.store.append([stream, ...also], this.appendOptions());
    } catch (err) {
      // Another writer enqueued the same id in between: it exists, which is all enqueue promises.
      if (err instanceof StreamVersionConflictError && err.streamId === workId) return { workId, created: false };
      throw err;
    }
    return { workId, created: true };
  }

  /**
   * Makes sure exactly one item ever exists for (kind, subjectId): the first call enqueues it, later
   * calls (from any process) return the same work id and append nothing.
   */
  async ensure(spec: Omit<EnqueueSpec, 'workId'>): Promise<{ workId: string; created: boolean }> {
    const { workId, stream } = this.enqueueStream(spec);
    const result = await this.options.store.append(
      stream,
      this.appendOptions(`work.ensure:${spec.kind}:${spec.subjectId}`),
    );
    const recorded: string = findEvent(result.events, 'work.enqueued')?.data.workId ?? workId;
    return { workId: recorded, created: !result.replayed && recorded === workId };
  }

  /** Claims one item by id (queued or retry_scheduled and due, or leased with an expired lease). */
  async claim(workId: string, options: { leaseMs?: number } = {}): Promise<WorkClaim> {
    const leaseMs = options.leaseMs ?? this.leaseMs;
    const outcome = await commandLoop(this.options.store, async () => {
      const decision = decideClaim(
        this.claimContext(),
        await loadWork(this.options.store, workId),
        this.options.clock.now(),
        leaseMs,
      );
      return { streams: decision.stream ? [decision.stream] : [], result: decision, options: this.appendOptions() };
    });
    if ('claim' in outcome) return outcome.claim;
    throw new NotClaimableError(workId, outcome.refused);
  }

  /**
   * Claims up to `limit` due items, oldest first (optionally of one kind), including leased items
   * whose lease has expired, in one commit (concurrent callers' claims share it too). Items another
   * worker takes first are skipped. See {@link claimDue}.
   */
  async claimDue(options: { kind?: string; limit: number; leaseMs?: number }): Promise<WorkClaim[]> {
    const ctx: ClaimContext = {
      ...this.claimContext(),
      onRacesLost: (lost) => {
        this.claimStats.racesLost += lost;
      },
    };
    // On PostgreSQL the claims are decided under the log-head lock (no race); elsewhere from a listing.
    const claims = await (claimsUnderLock(ctx) ? claimDueUnderLock : claimDue)(ctx, {
      kind: options.kind,
      limit: options.limit,
      leaseMs: options.leaseMs ?? this.leaseMs,
    });
    this.claimStats.claimed += claims.length;
    return claims;
  }

  /** Extends the lease. */
  async heartbeat(claim: WorkClaim, options: { leaseMs?: number } = {}): Promise<WorkClaim> {
    const leaseUntil = iso(this.options.clock.now() + (options.leaseMs ?? this.leaseMs));
    const renewed = { ...claim, leaseUntil };
    await this.decide({ type: 'heartbeat', ...this.claimOf(claim), leaseUntil }, [], claim, renewed);
    return renewed;
  }

  markRunning(claim: WorkClaim): Promise<void> {
    return this.decide({ type: 'mark_running', ...this.claimOf(claim) }, [], claim);
  }

  /** Records the intent to perform an external send; from here the item is never claimed again. */
  markSending(claim: WorkClaim): Promise<void> {
    return this.decide({ type: 'mark_sending', ...this.claimOf(claim) }, [], claim);
  }

  succeed(claim: WorkClaim, options: { externalRef?: string } = {}, also: readonly AppendStream[] = []): Promise<void> {
    return this.decide({ type: 'succeed', ...this.claimOf(claim), ...options }, also, claim);
  }

  /** Fails this attempt: with `retryAt` the item is rescheduled, without it fails for good. */
  fail(claim: WorkClaim, options: { error: { code: string; message: string }; retryAt?: string }): Promise<void> {
    return this.decide({ type: 'fail', ...this.claimOf(claim), ...options }, [], claim);
  }

  /** Marks an interrupted send as unknown: only an operator ({@link resolveUnknown}) settles it. */
  markUnknown(claim: WorkClaim, reason: string): Promise<void> {
    return this.decide({ type: 'mark_unknown', ...this.claimOf(claim), reason }, [], claim);
  }

  /** Cancels unsent work; repeating it is a no-op. */
  cancel(workId: string, reason: string): Promise<void> {
    return this.decide({ type: 'cancel', workId, reason });
  }

  /** An operator's decision on unknown work: `sent`, `failed`, or `retry` (at `retryAt` or now). */
  resolveUnknown(
    workId: string,
    decision: 'sent' | 'failed' | 'retry',
    options: { retryAt?: string; note?: string } = {},
  ): Promise<void> {
    return this.decide({ type: 'resolve', workId, decision, ...options });
  }

  /** The consumer's acknowledgement; with a claim token, it must be the current one. Repeats are no-ops. */
  acknowledge(workId: string, claimToken?: string, also: readonly AppendStream[] = []): Promise<void> {
    return this.decide({ type: 'acknowledge', workId, ...(claimToken === undefined ? {} : { claimToken }) }, also);
  }

  /**
   * Settles what the clock says is over: expired claimed/running items go to `retry_scheduled`,
   * expired `sending` items to `unknown` (never re-sent automatically), due items whose payload
   * cannot be read to `corrupt`. Everything is an event.
   */
  async recover(now = this.options.clock.now()): Promise<RecoverReport> {
    const at = iso(now);
    const reader = workItemsReader(this.options.store);
    let rescheduled = 0;
    let unknown = 0;
    let corrupt = 0;
    const kinds = await reader.kinds();
    for (const kind of kinds) {
      for (let after: string | undefined; ; ) {
        const page = (await reader.leased({ kind, limit: 200, after })).entries;
        const expired = page.filter((l) => l.leaseUntil < at);
        for (const lease of expired) {
          const state = await expireLease(this.options.store, lease.workId, at, this.appendOptions());
          if (state === 'unknown') unknown++;
          else if (state === 'retry_scheduled') rescheduled++;
        }
        if (page.length < 200 || expired.length < page.length) break;
        after = leasedKey(kind, page[page.length - 1]!.leaseUntil, page[page.length - 1]!.workId);
      }
    }
    for (const kind of kinds) {
      for (let after: string | undefined; ; ) {
        const page = (await reader.waiting({ kind, limit: 200, after })).entries;
        for (const entry of page) {
          if (await setAsideIfCorrupt(this.options.store, this.kinds, entry.workId, this.appendOptions())) corrupt++;
        }
        if (page.length < 200) break;
        after = waitingKey(kind, page[page.length - 1]!.dueAt, page[page.length - 1]!.workId);
      }
    }
    return { rescheduled, unknown, corrupt };
  }

  /**
   * Records `work.lease_expired` for leases that ran out by `now`, oldest first (at most `limit`; only of
   * `kind` and in `statuses` when given): claimed/running items go to `retry_scheduled`, `sending` items to
   * `unknown` (never re-sent automatically). What a live host runs now and then, so a dead host's sends do
   * not stay `sending` until some host restarts ({@link recover} runs only at start). Returns what it settled.
   */
  async expireLeases(
    options: { kind?: string; statuses?: readonly WorkItemView['status'][]; limit?: number; now?: number } = {},
  ): Promise<{ workId: string; state: 'unknown' | 'retry_scheduled' }[]> {
    const at = iso(options.now ?? this.options.clock.now());
    const limit = options.limit ?? 50;
    const settled: { workId: string; state: 'unknown' | 'retry_scheduled' }[] = [];
    const { entries } = await workItemsReader(this.options.store).leased({ kind: options.kind, limit });
    for (const lease of entries) {
      if (lease.leaseUntil >= at) break;
      if (options.statuses && !options.statuses.includes(lease.status)) continue;
      const state = await expireLease(this.options.store, lease.workId, at, this.appendOptions());
      if (state) settled.push({ workId: lease.workId, state });
    }
    return settled;
  }

  /** The work item's read model, or {@link NotFoundError}. */
  async get(workId: string): Promise<WorkItemView> {
    const view = await workItemsReader(this.options.store).get(workId);
    if (!view) throw new NotFoundError('work item', workId);
    return view;
  }

  // --- internals ------------------------------------------------------------------------------

  private claimContext(): ClaimContext {
    const { store, clock, ids, owner } = this.options;
    return {
      store,
      clock,
      ids,
      owner,
      kinds: this.kinds,
      appendOptions: this.appendOptions(),
      claimed: (claim, item) => this.written.set(claim, item),
    };
  }

  private appendOptions(idempotencyKey?: string): AppendOptions {
    return {
      meta: { actor: { kind: 'system', id: this.options.owner }, ...this.options.meta },
      ...(idempotencyKey ? { idempotencyKey } : {}),
    };
  }

  /** The claim a claimant's command presents, checked at the clock's now. */
  private claimOf(claim: WorkClaim): { workId: string; claimToken: string; now: string } {
    return { workId: claim.workId, claimToken: claim.claimToken, now: iso(this.options.clock.now()) };
  }

  /**
   * load (the work item fold) → {@link decideWork} → append, with `also` in the same commit when it appends.
   * A command on a claim this runtime wrote last decides first from the item as that write left it (no read);
   * its append expects that version, so when anyone else wrote since (a version conflict), or when that state
   * refuses the command, it runs the usual way from a fresh load. `next` is the claim the caller goes on with.
   */
  private async decide(
    command: WorkCommand,
    also: readonly AppendStream[] = [],
    claim?: WorkClaim,
    next: WorkClaim | undefined = claim,
  ): Promise<void> {
    const remembered = claim && this.written.get(claim);
    // Folded when a next command asks (most claims end with the command that wrote last: succeed, fail).
    const known = typeof remembered === 'function' ? remembered() : remembered;
    if (claim) this.written.delete(claim);
    if (known) {
      let events: ReturnType<typeof decideWork> = [];
      try {
        events = decideWork(command, known.facts);
      } catch {
        // Refused on what this runtime last wrote: the fresh load below decides (and refuses with the truth).
      }
      if (events.length > 0) {
        try {
          const result = await this.options.store.append(
            [streamAppend(WORK, known, events), ...also],
            this.appendOptions(),
          );
          if (next) this.written.set(next, () => afterAppend(known, result.events));
          return;
        } catch (err) {
          if (!(err instanceof StreamVersionConflictError)) throw err;
        }
      }
    }
    return commandLoop(this.options.store, async () => {
      const item = await loadWork(this.options.store, command.workId);
      const events = decideWork(command, item.facts);
      return {
        streams: events.length > 0 ? [streamAppend(WORK, item, events), ...also] : [],
        result: undefined,
        options: this.appendOptions(),
      };
    });
  }
}
