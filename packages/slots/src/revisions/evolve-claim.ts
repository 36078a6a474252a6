import { asDomainEvent, type RecordedEvent } from '@demiurge/contracts';

/** Who holds a core's exclusive evolve scope `evolve:<coreId>`, as the core stream says. */
export interface EvolveClaim {
  readonly taskId: string;
  readonly host: string;
}

/** A core stream read once: its version, whether its history began, its revisions' count and the evolve claim. */
export interface CoreStreamState {
  /** The stream's version (its event count): the expected version of the next append. */
  readonly version: number;
  /** Whether `core.registered` was recorded (the first revision registers the core). */
  readonly registered: boolean;
  /** The claim not released yet, if any (it may have expired with its task or host: the caller judges). */
  readonly claim: EvolveClaim | undefined;
}

/**
 * Folds a core stream (`core:<coreId>`) into what an append to it needs: its version, whether the core is
 * registered, and the evolve claim that is not released. Pure: the caller decides whether a claim expired.
 *
 * @example
 * ```ts
 * const { version, claim } = coreStreamState(await store.readStream(coreStreamId('default')));
 * ```
 */
export function coreStreamState(events: readonly RecordedEvent[]): CoreStreamState {
  let registered = false;
  let claim: EvolveClaim | undefined;
  for (const e of events.map(asDomainEvent)) {
    if (e.type === 'core.registered') registered = true;
    else if (e.type === 'core.evolve_claimed') claim = { taskId: e.data.taskId, host: e.data.host };
    else if (e.type === 'core.evolve_released' && claim?.taskId === e.data.taskId) claim = undefined;
  }
  return { version: events.at(-1)?.streamVersion ?? 0, registered, claim };
}
