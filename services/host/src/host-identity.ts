import { hostname } from 'node:os';

/**
 * This host process's id: `host:<hostname>:<pid>:<process start time>`. Distinct per process (two hosts
 * on one home never share leases), and checkable: {@link isHostAlive} tells a dead owner from a live one.
 */
export function hostIdentity(pid = process.pid): string {
  return `host:${hostname()}:${pid}:${Math.round(Date.now() - process.uptime() * 1000)}`;
}

/**
 * Whether the host that wrote `id` may still be running: another machine's hosts are assumed alive (their
 * leases decide); on this machine the pid must exist. A pid reused by an unrelated process reads as alive,
 * which only delays recovery until the lease expires — never the reverse.
 */
export function isHostAlive(id: string): boolean {
  const [kind, host, pid] = id.split(':');
  if (kind !== 'host' || host !== hostname() || !pid) return true;
  if (Number(pid) === process.pid) return true;
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
