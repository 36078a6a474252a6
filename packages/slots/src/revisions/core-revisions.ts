import { type Actor, asDomainEvent, type CoreRevisionSaved, coreStreamId, type EventData } from '@demiurge/contracts';
import type { AppendStream, EventStore } from '@demiurge/event-store';
import { coreFileChanges, summarizeChanges } from './core-diff.js';
import { type CoreFiles, type CoreSnapshotStore, revisionOf } from './core-snapshot.js';
import { type CoreStreamState, coreStreamState, type EvolveClaim } from './evolve-claim.js';
import { EvolveClaimLostError, UnknownRevisionError } from './revision-errors.js';

/** The stream type of a core's revisions (one stream per core: `core:<coreId>`). */
export const CORE_STREAM_TYPE = 'core';

/** One recorded revision (a `core.revision_saved`), oldest first in {@link CoreRevisions.list}. */
export interface RevisionEntry extends EventData<typeof CoreRevisionSaved> {
  /** Its place in the core's history (1 = the first revision). */
  readonly number: number;
  readonly actor: Actor;
  readonly recordedAt: string;
}

/** What {@link CoreRevisions.record} takes. */
export interface RecordRevision {
  readonly files: CoreFiles;
  readonly message: string;
  readonly reason: 'save' | 'rollback' | 'evolve';
  readonly actor: Actor;
  readonly restoredFrom?: string;
  readonly taskId?: string;
  /**
   * The evolve task that must hold `evolve:<coreId>` for this revision to be recorded (its fencing): the
   * revision and the claim's release are one commit, refused with `EvolveClaimLostError` if it lost the claim.
   */
  readonly heldBy?: string;
}

/** How an evolve that did not save a revision ended, as its `core.evolve_released` says. */
export type EvolveReleaseOutcome = 'failed' | 'cancelled' | 'unchanged';

/**
 * A core's revisions: snapshots in a {@link CoreSnapshotStore}, history in the log (`core.revision_saved` on
 * the stream `core:<coreId>`). The current revision is the one the last event names. Recording writes the
 * snapshot first and appends the event at the stream version it read, so two writers cannot both make their
 * revision current from the same parent (the second gets `StreamVersionConflictError`).
 *
 * @example
 * ```ts
 * const revisions = new CoreRevisions({ store, snapshots, coreId: 'default' });
 * const { entry } = await revisions.record({ files: await readCoreFiles('agent'), message: 'first',
 *   reason: 'save', actor: { kind: 'user', id: 'cli' } });
 * (await revisions.current())?.revision === entry.revision; // true
 * ```
 */
export class CoreRevisions {
  readonly coreId: string;
  readonly snapshots: CoreSnapshotStore;
  private readonly store: EventStore;

  constructor(options: { store: EventStore; snapshots: CoreSnapshotStore; coreId: string }) {
    this.store = options.store;
    this.snapshots = options.snapshots;
    this.coreId = options.coreId;
  }

  /** Every recorded revision, oldest first. */
  async list(): Promise<RevisionEntry[]> {
    return (await this.read()).entries;
  }

  /** The core stream's version, registration and evolve claim (see {@link coreStreamState}). */
  async state(): Promise<CoreStreamState> {
    return (await this.read()).state;
  }

  /**
   * Appends `core.evolve_claimed` for `taskId` at the stream version `after` was read at, with `also` (the
   * task's `task.started`) in the same commit: two hosts that read the same version cannot both claim (the
   * second gets `StreamVersionConflictError`). The caller judged `after.claim` expired (`supersedes`) or absent.
   */
  async claimEvolve(input: {
    readonly taskId: string;
    readonly host: string;
    readonly after: CoreStreamState;
    readonly supersedes?: EvolveClaim & { readonly why: string };
    readonly also: readonly AppendStream[];
    readonly actor: Actor;
  }): Promise<void> {
    await this.store.append(
      [
        ...input.also,
        {
          streamType: CORE_STREAM_TYPE,
          streamId: coreStreamId(this.coreId),
          expectedVersion: input.after.version === 0 ? 'no_stream' : input.after.version,
          events: [
            ...(input.after.registered ? [] : [{ type: 'core.registered', data: { coreId: this.coreId } }]),
            {
              type: 'core.evolve_claimed',
              data: {
                coreId: this.coreId,
                taskId: input.taskId,
                host: input.host,
                ...(input.supersedes ? { supersedes: input.supersedes } : {}),
              },
            },
          ],
        },
      ],
      { meta: { actor: input.actor } },
    );
  }

  /**
   * Gives `evolve:<coreId>` back when `taskId` still holds it (`core.evolve_released`); a claim lost or already
   * released records nothing. Retries once a concurrent append moved the stream.
   */
  async releaseEvolve(taskId: string, outcome: EvolveReleaseOutcome, actor: Actor): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const state = await this.state();
      if (state.claim?.taskId !== taskId) return false;
      try {
        await this.store.append(
          {
            streamType: CORE_STREAM_TYPE,
            streamId: coreStreamId(this.coreId),
            expectedVersion: state.version,
            events: [{ type: 'core.evolve_released', data: { coreId: this.coreId, taskId, outcome } }],
          },
          { meta: { actor } },
        );
        return true;
      } catch (error) {
        if (attempt >= 3 || (error as { name?: string }).name !== 'StreamVersionConflictError') throw error;
      }
    }
  }

  private async read(): Promise<{ entries: RevisionEntry[]; state: CoreStreamState }> {
    const events = await this.store.readStream(coreStreamId(this.coreId));
    const entries: RevisionEntry[] = [];
    for (const e of events.map(asDomainEvent)) {
      if (e.type !== 'core.revision_saved') continue;
      entries.push({ ...e.data, number: entries.length + 1, actor: e.meta.actor, recordedAt: e.recordedAt });
    }
    return { entries, state: coreStreamState(events) };
  }

  /** The current revision, or undefined when none was recorded (the working copy runs unversioned). */
  async current(): Promise<RevisionEntry | undefined> {
    return (await this.list()).at(-1);
  }

  /** The recorded revision a full id or a unique prefix (4+ hex digits) names, or `#<number>` (1 = the first). */
  async resolve(ref: string): Promise<RevisionEntry> {
    const all = await this.list();
    const byNumber = /^#(\d+)$/.exec(ref);
    if (byNumber) {
      const hit = all[Number(byNumber[1]) - 1];
      if (!hit) throw new UnknownRevisionError(ref, `core ${this.coreId} has ${all.length} revision(s)`);
      return hit;
    }
    if (!/^[0-9a-f]{4,64}$/.test(ref)) {
      throw new UnknownRevisionError(ref, 'give a revision id (at least 4 hex digits) as `core versions` lists them');
    }
    const hits = [...new Set(all.filter((e) => e.revision.startsWith(ref)).map((e) => e.revision))];
    if (hits.length === 0) throw new UnknownRevisionError(ref, `core ${this.coreId} has no such revision`);
    if (hits.length > 1)
      throw new UnknownRevisionError(ref, `the prefix names ${hits.length} revisions; give more digits`);
    return all.findLast((e) => e.revision === hits[0]) as RevisionEntry;
  }

  /**
   * Stores the files as a snapshot and makes it current with one `core.revision_saved` (parent: the revision
   * current before). A `save` of files equal to the current revision records nothing (`changed: false`).
   */
  async record(input: RecordRevision): Promise<{ entry: RevisionEntry; changed: boolean }> {
    const { entries: all, state } = await this.read();
    const current = all.at(-1);
    if (input.heldBy !== undefined && state.claim?.taskId !== input.heldBy) {
      throw new EvolveClaimLostError(this.coreId, input.heldBy, state.claim?.taskId);
    }
    if (input.reason === 'save' && current && revisionOf(input.files) === current.revision) {
      return { entry: current, changed: false };
    }
    const revision = await this.snapshots.put(input.files);
    const parentFiles = current ? await this.snapshots.files(current.revision).catch(() => new Map()) : new Map();
    const data = {
      coreId: this.coreId,
      revision,
      parent: current?.revision ?? null,
      message: input.message,
      reason: input.reason,
      ...(input.restoredFrom ? { restoredFrom: input.restoredFrom } : {}),
      ...(input.taskId ? { taskId: input.taskId } : {}),
      files: input.files.size,
      summary: summarizeChanges(coreFileChanges(parentFiles, input.files)),
    };
    const result = await this.store.append(
      {
        streamType: CORE_STREAM_TYPE,
        streamId: coreStreamId(this.coreId),
        expectedVersion: state.version === 0 ? 'no_stream' : state.version,
        events: [
          ...(state.registered ? [] : [{ type: 'core.registered', data: { coreId: this.coreId } }]),
          { type: 'core.revision_saved', data },
          ...(input.heldBy !== undefined
            ? [
                {
                  type: 'core.evolve_released',
                  data: { coreId: this.coreId, taskId: input.heldBy, outcome: 'saved' },
                },
              ]
            : []),
        ],
      },
      { meta: { actor: input.actor } },
    );
    const event = asDomainEvent(result.events.find((e) => e.type === 'core.revision_saved')!);
    if (event.type !== 'core.revision_saved') throw new Error(`core ${this.coreId}: the append recorded ${event.type}`);
    const entry: RevisionEntry = {
      ...event.data,
      number: all.length + 1,
      actor: event.meta.actor,
      recordedAt: event.recordedAt,
    };
    return { entry, changed: true };
  }
}
