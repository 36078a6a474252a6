import { type Clock, createIdGenerator, type IdGenerator, systemClock } from '@demiurge/contracts';
import { DurableWorkRuntime, HostWorkLifecycleRuntime, RuntimeControlPlane } from '@demiurge/control-plane';
import type { SqliteEventStore } from '@demiurge/event-store-sqlite';
import { RunRuntime } from '@demiurge/sessions';

/** Who the CLI's writes are recorded as (the run and work owner, the event actor). */
export const CLI_OWNER = 'cli';

/** The runtimes an admin command uses, on one store, acting as {@link CLI_OWNER}. */
export interface CliRuntime {
  readonly store: SqliteEventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly work: DurableWorkRuntime;
  readonly controlPlane: RuntimeControlPlane;
  readonly host: HostWorkLifecycleRuntime;
  readonly runs: RunRuntime;
}

/** Wires the control plane and the run runtime on an open store, as the operator surface `cli`. */
export function cliRuntime(store: SqliteEventStore, clock: Clock = systemClock): CliRuntime {
  const ids = createIdGenerator(clock);
  const meta = { actor: { kind: 'operator' as const, id: CLI_OWNER } };
  const work = new DurableWorkRuntime({ store, clock, ids, owner: CLI_OWNER, meta });
  const controlPlane = new RuntimeControlPlane({ store, clock, ids, work, meta });
  const host = new HostWorkLifecycleRuntime({ store, clock, ids, work });
  const runs = new RunRuntime({ store, clock, ids, owner: CLI_OWNER, controlPlane, meta });
  return { store, clock, ids, work, controlPlane, host, runs };
}
