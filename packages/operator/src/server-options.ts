import type { EventHub } from './event-hub.js';
import type { OperatorBackend } from './operator-backend.js';
import type { ConnectionContext } from './operator-connection.js';
import { OPERATOR_PACKAGE_VERSION, type OperatorLimitSettings, OperatorLimits } from './protocol.js';

/** What every transport needs. */
export interface OperatorServerOptions {
  readonly backend: OperatorBackend;
  /** The server version in the handshake; defaults to this package's version. */
  readonly version?: string;
  /**
   * Failures the host should log: a backend error answered as `internal`, an invalid event the backend
   * pushed, a client disconnected for not reading. Defaults to one line on stderr.
   */
  readonly onError?: (error: unknown) => void;
  /** Overrides of {@link OperatorLimits} (tests use smaller ones). */
  readonly limits?: Partial<OperatorLimitSettings>;
}

/** The reason an initialized client receives in `operator.shutdown` when `close()` gives none. */
export const DEFAULT_SHUTDOWN_REASON = 'the operator gateway is closing';

export function defaultOnError(error: unknown): void {
  console.error(`operator gateway: ${error instanceof Error ? error.message : String(error)}`);
}

export function connectionContext(options: OperatorServerOptions, hub: EventHub): ConnectionContext {
  return {
    backend: options.backend,
    hub,
    version: options.version ?? OPERATOR_PACKAGE_VERSION,
    limits: { ...OperatorLimits, ...options.limits },
    onError: options.onError ?? defaultOnError,
  };
}
