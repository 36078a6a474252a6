import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/**
 * Why a turn's drive stops before its turn ends: the run is being cancelled (by anyone, from any process), the
 * host is closing (the run is released for the next host), or this owner lost the run's lease (a heartbeat
 * failed: another host may own it now).
 */
export type StopReason =
  | { readonly kind: 'cancel_requested' }
  | { readonly kind: 'host_closing' }
  | { readonly kind: 'lease_lost'; readonly cause: unknown };

const messages: Record<StopReason['kind'], string> = {
  cancel_requested: 'the run is being cancelled',
  host_closing: 'the host closed while the call ran',
  lease_lost: "this host lost the run's lease",
};

/** The abort reason of a stopped drive, and the error a write refused for the same reason throws. */
export class TurnStopped extends Error {
  override readonly name = 'TurnStopped';
  constructor(readonly reason: StopReason) {
    super(messages[reason.kind], reason.kind === 'lease_lost' ? { cause: reason.cause } : undefined);
  }
}

/**
 * The typed cancellation of one drive: an AbortSignal (handed to the provider, tools and slot hooks) whose
 * reason is always a {@link TurnStopped}. The first stop wins.
 */
export class Cancellation {
  private readonly controller = new AbortController();

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The reason the drive was stopped, or undefined while it runs. */
  get reason(): StopReason | undefined {
    const reason: unknown = this.controller.signal.reason;
    return this.controller.signal.aborted && reason instanceof TurnStopped ? reason.reason : undefined;
  }

  stop(reason: StopReason): void {
    if (!this.controller.signal.aborted) this.controller.abort(new TurnStopped(reason));
  }
}

/** The engine is closing: no new turn starts, running turns are released for the next host. */
export class EngineClosingError extends DemiurgeError {
  override readonly name = 'EngineClosingError';
  readonly code = ErrorCode.Closing;
  constructor() {
    super('the host is closing: no new turn is admitted');
  }
}
