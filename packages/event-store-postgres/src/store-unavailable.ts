import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/** The PostgreSQL server cannot be reached, or refused the login. One line, naming the server (never the password). */
export class StoreUnavailableError extends DemiurgeError {
  override readonly name = 'StoreUnavailableError';
  readonly code = ErrorCode.StoreUnavailable;
  constructor(
    /** The server and database, without the password: `postgres://user@host:port/db`. */
    readonly where: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot open the event store at ${where}: ${reason}`, options);
  }
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString().replace(/\?.*$/, '');
  } catch {
    return 'postgres://(unparseable url)';
  }
}
