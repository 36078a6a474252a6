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
