import type { Clock, EventRegistry, IdGenerator } from '@demiurge/contracts';
import type { EventStore } from '../event-store.js';
import type { Projector } from '../projector.js';

export interface OpenStoreOptions {
  readonly registry: EventRegistry;
  readonly projectors: readonly Projector[];
  readonly clock: Clock;
  readonly ids: IdGenerator;
}

/**
 * How the conformance suite makes a store: fresh storage (a file, a log object), and a store opened
 * on it. Opening the same storage again is "reopening" the store.
 */
export interface EventStoreHarness<S = unknown> {
  readonly name: string;
  createStorage(): S | Promise<S>;
  open(storage: S, options: OpenStoreOptions): Promise<EventStore>;
  /** Removes what createStorage made; called after each test. */
  disposeStorage?(storage: S): void | Promise<void>;
}
