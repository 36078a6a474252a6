import { DemiurgeError, ErrorCode } from '@demiurge/contracts';
import type { KindRegistry } from '@demiurge/control-plane';
import { workerTaskKinds } from '@demiurge/workers';

/** Task kinds a host runs without a worker handler: the scheduler submits and settles its own fires. */
const SELF_SETTLED = ['schedule.fire'];

/** A task of a kind this host has no handler for: refused at submit, so it is never left `created`. */
export class UnhandledTaskKindError extends DemiurgeError {
  override readonly name = 'UnhandledTaskKindError';
  readonly code = ErrorCode.UnknownKind;
  constructor(
    readonly kind: string,
    readonly handled: readonly string[],
  ) {
    super(
      `this host has no handler for task kind "${kind}", so a task of it would never start; ` +
        `the kinds it runs: ${handled.join(', ')}. Nothing was submitted`,
    );
  }
}

/**
 * The task kinds a host accepts at submit: the worker's kinds (with their input schemas) that have a handler
 * here (`handled()`, read at each submit), and `schedule.fire`. Another ledger kind is refused with
 * {@link UnhandledTaskKindError}; a kind that is no ledger kind at all with the control plane's `UnknownKindError`.
 */
export function hostTaskKinds(handled: () => readonly string[]): KindRegistry {
  const runs = (kind: string) => SELF_SETTLED.includes(kind) || handled().includes(kind);
  return {
    get kinds() {
      return workerTaskKinds.kinds.filter(runs);
    },
    has: (kind) => workerTaskKinds.has(kind) && runs(kind),
    schema(kind) {
      const schema = workerTaskKinds.schema(kind); // not a ledger kind: UnknownKindError
      if (!runs(kind)) throw new UnhandledTaskKindError(kind, workerTaskKinds.kinds.filter(runs));
      return schema;
    },
  };
}
