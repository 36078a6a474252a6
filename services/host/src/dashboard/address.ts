import { DemiurgeError, ErrorCode } from '@demiurge/contracts';

/** The dashboard's default address: loopback only. */
export const DEFAULT_HTTP_ADDR = '127.0.0.1:7780';

/** `--http` got an address that is not `HOST:PORT`. */
export class HttpAddressError extends DemiurgeError {
  override readonly name = 'HttpAddressError';
  readonly code = ErrorCode.InvalidSpec;
}

/** `HOST:PORT` (`[::1]:7780` for IPv6; port 0 picks a free one) → its parts. */
export function parseHttpAddress(addr: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(addr.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65_535) {
    throw new HttpAddressError(`--http: "${addr}" is not HOST:PORT (for example ${DEFAULT_HTTP_ADDR})`);
  }
  return { host: (m[1] ?? m[2])!, port };
}

/** The dashboard could not listen on its address (in use, not on this machine, not permitted). */
export class HttpListenError extends DemiurgeError {
  override readonly name = 'HttpListenError';
  readonly code = ErrorCode.InvalidSpec;
}

/** A listen error of `addr` → an {@link HttpListenError} that says what to do. */
export function listenError(addr: string, error: NodeJS.ErrnoException): HttpListenError {
  const why =
    error.code === 'EADDRINUSE'
      ? 'the address is in use (another dashboard or program listens there)'
      : error.code === 'EADDRNOTAVAIL'
        ? 'the address is not one of this machine'
        : error.code === 'EACCES'
          ? 'listening there is not permitted (a port below 1024?)'
          : error.message;
  return new HttpListenError(`the dashboard cannot listen on ${addr}: ${why}; name another with --http HOST:PORT`, {
    cause: error,
  });
}
