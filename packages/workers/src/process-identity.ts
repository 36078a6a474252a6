import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/**
 * What `task.process_started` records of a process: the host-issued spawn id and the OS identity. The pid
 * and pgid alone are never enough to signal anything; {@link processMatches} re-reads the start marker.
 */
export interface ProcessRecord {
  readonly spawnId: string;
  readonly host: string;
  readonly pid: number;
  readonly pgid: number;
  readonly platform: string;
  /** `linux:<boot id>:<start time>`; absent (or null) where the platform offers none. */
  readonly startMarker?: string | null | undefined;
}

/** The fields of `/proc/<pid>/stat` the worker uses. */
export interface ProcStat {
  readonly pid: number;
  /** R, S, D, Z (zombie), X (dead)... */
  readonly state: string;
  readonly ppid: number;
  readonly pgrp: number;
  /** Field 22: start time in clock ticks since boot, as a decimal string. */
  readonly starttime: string;
}

/** The environment variable every spawned process (and, by inheritance, its descendants) carries. */
export const SPAWN_ID_ENV = 'DEMIURGE_SPAWN_ID';

/**
 * Parses one `/proc/<pid>/stat` line. `comm` may hold spaces and parentheses, so fields are counted after the
 * last `)`: field 3 (state) is the first of them, field 22 (starttime) the twentieth.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const pid = Number.parseInt(text, 10);
  const rest = text
    .slice(close + 2)
    .trim()
    .split(' ');
  const [state, ppid, pgrp] = rest;
  const starttime = rest[19];
  if (!state || ppid === undefined || pgrp === undefined || starttime === undefined || !/^\d+$/.test(starttime)) {
    return undefined;
  }
  return { pid, state, ppid: Number(ppid), pgrp: Number(pgrp), starttime };
}

/** The process's stat, or undefined when it is gone (or this is not Linux). */
export async function readProcStat(pid: number): Promise<ProcStat | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : parseProcStat(text);
}

/** A zombie or a dead task entry: the process no longer runs and can no longer be signalled usefully. */
export function isDead(stat: ProcStat): boolean {
  return stat.state === 'Z' || stat.state === 'X' || stat.state === 'x';
}

let bootIdCache: string | undefined;

/** This boot's id (`/proc/sys/kernel/random/boot_id`), read once; undefined off Linux. */
export function currentBootId(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  bootIdCache ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  return bootIdCache;
}

/**
 * The start marker of a running process: on Linux `linux:<boot id>:<starttime>`; undefined elsewhere or when
 * the process is already gone. Synchronous on purpose: called right after `spawn()` returns, before the event
 * loop can reap a child that exited at once, so even an instant exit still has its (zombie) stat to read.
 *
 * @example
 * ```ts
 * const child = spawn('sleep', ['5'], { detached: true });
 * startMarkerOf(child.pid!); // 'linux:7f4c…:123456'
 * ```
 */
export function startMarkerOf(pid: number): string | undefined {
  const boot = currentBootId();
  if (boot === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const stat = parseProcStat(text);
  return stat ? `linux:${boot}:${stat.starttime}` : undefined;
}

/** The parts of a Linux start marker; undefined for any other form. */
export function parseStartMarker(marker: string | null | undefined): { bootId: string; starttime: string } | undefined {
  const m = /^linux:([^:]+):(\d+)$/.exec(marker ?? '');
  return m ? { bootId: m[1]!, starttime: m[2]! } : undefined;
}

/**
 * Whether the recorded process is still the same live process: same boot, same pid, same start time, not a
 * zombie. False for a reused pid (another start time), after a reboot, once it exited, and whenever the record
 * has no marker this platform can check — so a caller that signals only on `true` never hits a stranger.
 *
 * @example
 * ```ts
 * if (await processMatches(view.process)) process.kill(-view.process.pgid, 'SIGTERM');
 * ```
 */
export async function processMatches(record: ProcessRecord): Promise<boolean> {
  const marker = parseStartMarker(record.startMarker);
  if (!marker || marker.bootId !== currentBootId()) return false;
  const stat = await readProcStat(record.pid);
  return stat !== undefined && !isDead(stat) && stat.starttime === marker.starttime;
}

/** Every process's stat (Linux); unreadable entries (raced exits) are skipped. */
export async function listProcesses(): Promise<ProcStat[]> {
  const names = (await readdir('/proc').catch(() => [] as string[])).filter((n) => /^\d+$/.test(n));
  const stats = await Promise.all(names.map((n) => readProcStat(Number(n))));
  return stats.filter((s): s is ProcStat => s !== undefined);
}

/** Whether the process's environment carries `DEMIURGE_SPAWN_ID=<spawnId>` (false when unreadable or gone). */
export async function carriesSpawnId(pid: number, spawnId: string): Promise<boolean> {
  const environ = await readFile(`/proc/${pid}/environ`).catch(() => undefined);
  if (environ === undefined) return false;
  const needle = `${SPAWN_ID_ENV}=${spawnId}`;
  return environ.toString('utf8').split('\0').includes(needle);
}
