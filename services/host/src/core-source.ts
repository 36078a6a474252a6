import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { asDomainEvent } from '@demiurge/contracts';
import type { EventStore } from '@demiurge/event-store';
import {
  type AgentCore,
  CoreRevisions,
  CoreSnapshotStore,
  loadCore,
  PinnedRevisionGoneError,
  type RevisionEntry,
} from '@demiurge/slots';

/** Where a home keeps its core snapshots (content-addressed, see docs/core-revisions.md). */
export const coreStoreDir = (home: string): string => join(home, 'core-store');

/** The core a turn runs: the loaded core and the revision it is (absent: the unversioned working copy). */
export interface ResolvedCore {
  readonly core: AgentCore;
  readonly revision?: string;
}

/**
 * The Agent Core a host runs, by revision. Without any recorded revision the host runs its working copy (the
 * configured core directory) as before; once `core save` (or an evolve, or a rollback) recorded one, every
 * admission runs the current revision from its checkout under the home. The current revision is read from
 * the log at each admission, so a host picks up a new one at the next turn, never mid-turn; a turn keeps the
 * revision it was admitted with (its pin).
 *
 * @example
 * ```ts
 * const source = new CoreSource({ store, home, workingCopy: await loadCore('agent') });
 * const { core, revision } = await source.current();
 * ```
 */
export class CoreSource {
  readonly snapshots: CoreSnapshotStore;
  readonly revisions: CoreRevisions;
  readonly workingCopy: AgentCore;
  private readonly loaded = new Map<string, Promise<AgentCore>>();
  private readonly store: EventStore;

  constructor(options: { store: EventStore; home: string; workingCopy: AgentCore }) {
    this.store = options.store;
    this.workingCopy = options.workingCopy;
    this.snapshots = new CoreSnapshotStore(coreStoreDir(options.home));
    this.revisions = new CoreRevisions({
      store: options.store,
      snapshots: this.snapshots,
      coreId: options.workingCopy.id,
    });
  }

  /** The current revision's entry, or undefined when none was recorded. */
  currentEntry(): Promise<RevisionEntry | undefined> {
    return this.revisions.current();
  }

  /** The core the next turn runs: its id and current revision (null: the unversioned working copy). */
  async status(): Promise<{ id: string; revision: string | null; number: number | null }> {
    const entry = await this.revisions.current();
    return { id: this.workingCopy.id, revision: entry?.revision ?? null, number: entry?.number ?? null };
  }

  /** The core the next admission runs: the current revision, or the working copy when there is none. */
  async current(): Promise<ResolvedCore> {
    const entry = await this.revisions.current();
    if (!entry) return { core: this.workingCopy };
    return { core: await this.at(entry.revision), revision: entry.revision };
  }

  /** The core of a revision (loaded from its checkout once per host); undefined: the working copy. */
  at(revision: string | undefined): Promise<AgentCore> {
    if (revision === undefined) return Promise.resolve(this.workingCopy);
    let loading = this.loaded.get(revision);
    if (!loading) {
      loading = this.snapshots.checkout(revision).then((dir) => loadCore(dir));
      this.loaded.set(revision, loading);
      loading.catch(() => this.loaded.delete(revision));
    }
    return loading;
  }

  /**
   * The core a turn runs with: the revision its `turn.started` pinned (no revision pinned: the working copy
   * as loaded at start; a turn recorded before pins: the current revision). What a tool of the turn reads of
   * the core (e.g. `delegate_task`'s slot ids) comes from here, never from the working copy edited meanwhile.
   */
  async ofTurn(turnId: string): Promise<AgentCore> {
    const [first] = await this.store.readStream(turnId, { limit: 1 });
    const started = first ? asDomainEvent(first) : undefined;
    const pin = started?.type === 'turn.started' ? started.data.core : undefined;
    return pin ? this.at(pin.revision) : (await this.current()).core;
  }

  /** Throws {@link PinnedRevisionGoneError} when a turn pinned to `revision` cannot run on it any more. */
  async ensureRunnable(coreId: string, revision: string | undefined): Promise<void> {
    if (revision === undefined || this.loaded.has(revision)) return;
    if (existsSync(join(this.snapshots.root, 'checkouts', revision))) return;
    if (!(await this.snapshots.has(revision))) {
      throw new PinnedRevisionGoneError(coreId, revision, this.snapshots.root);
    }
  }
}
