import type { DomainEventData, DomainEventType } from '@demiurge/contracts';

/**
 * An event as a fold reads it: its type and its data, typed by the contracts' schema of that type. A recorded
 * event (through `asDomainEvent`) is one; so is an event a runtime just appended (the same shape, validated by
 * the store), so the command side evolves its state from what it wrote without reading it back.
 */
export type Fact<T extends DomainEventType = DomainEventType> = {
  [K in T]: { readonly type: K; readonly data: DomainEventData<K> };
}[T];
