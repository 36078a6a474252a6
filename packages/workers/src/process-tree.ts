import { setTimeout as delay } from 'node:timers/promises';
import {
  carriesSpawnId,
  currentBootId,
  isDead,
  listProcesses,
  type ProcessRecord,
  parseStartMarker,
} from './process-identity.js';

/** How signals are sent; injectable so tests can count them. Same contract as `process.kill`. */
export type KillFn = (pid: number, signal: NodeJS.Signals | 0) => void;

/** What a scan found of a recorded process tree, alive now. */
export interface TreeScan {
  /** The recorded leader itself is alive with the recorded start marker. */
  readonly leaderMatches: boolean;
  /**
   * The process group is the recorded one: its leader matches, or (the leader gone) a member of it carries the
   * spawn id. A group id cannot be reused while any member lives, so one verified member proves the group.
   */
  readonly groupVerified: boolean;
  /** Live (non-zombie) members of the recorded process group. */
  readonly groupMembers: readonly number[];
  /** Live processes outside the group that carry the spawn id (descendants that left the group, e.g. setsid). */
  readonly escaped: readonly number[];
}

const NOTHING: TreeScan = { leaderMatches: false, groupVerified: false, groupMembers: [], escaped: [] };

/**
 * Finds what is left of a recorded process tree, verified: nothing is reported unless it provably belongs to
 * the record (start marker of the leader, or the spawn-id tag in a process's environment, started no earlier
 * than the leader, on the same boot). Linux only; elsewhere it reports nothing (no marker to check).
 */
export async function scanTree(record: ProcessRecord): Promise<TreeScan> {
  const marker = parseStartMarker(record.startMarker);
  if (!marker || marker.bootId !== currentBootId()) return NOTHING;
  const since = Number(marker.starttime);
  const live = (await listProcesses()).filter((p) => !isDead(p));
  const leaderMatches = live.some((p) => p.pid === record.pid && p.starttime === marker.starttime);
  const group = live.filter((p) => p.pgrp === record.pgid);
  // Candidates for the spawn-id check: started no earlier than the leader (the tag is inherited, never older).
  const young = live.filter((p) => Number(p.starttime) >= since);
  let groupVerified = leaderMatches;
  if (!groupVerified) {
    for (const p of group) {
      if (Number(p.starttime) >= since && (await carriesSpawnId(p.pid, record.spawnId))) {
        groupVerified = true;
        break;
      }
    }
  }
  const escaped: number[] = [];
  for (const p of young) {
    if (p.pgrp !== record.pgid && (await carriesSpawnId(p.pid, record.spawnId))) escaped.push(p.pid);
  }
  return { leaderMatches, groupVerified, groupMembers: groupVerified ? group.map((p) => p.pid) : [], escaped };
}

/** Whether a scan found anything of the tree still running. */
export function treeAlive(scan: TreeScan): boolean {
  return scan.groupMembers.length > 0 || scan.escaped.length > 0;
}

/** Sends `signal` to the verified group and to each escaped descendant; returns how many targets it signalled. */
export function signalTree(record: ProcessRecord, scan: TreeScan, signal: NodeJS.Signals, kill: KillFn): number {
  let sent = 0;
  if (scan.groupVerified && scan.groupMembers.length > 0 && send(kill, -record.pgid, signal)) sent++;
  for (const pid of scan.escaped) if (send(kill, pid, signal)) sent++;
  return sent;
}

function send(kill: KillFn, target: number, signal: NodeJS.Signals): boolean {
  try {
    kill(target, signal);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return false;
    throw error;
  }
}

/** How a tree was stopped. */
export interface StopReport {
  /** Something of the tree was running (and was signalled). */
  readonly signalled: boolean;
  /** The last signal sent: SIGTERM, or SIGKILL when the grace period ran out; null when nothing ran. */
  readonly finalSignal: 'SIGTERM' | 'SIGKILL' | null;
  /** Processes still alive after SIGKILL and its wait (should be empty; e.g. stuck in uninterruptible IO). */
  readonly survivors: readonly number[];
}

export interface StopOptions {
  readonly graceMs: number;
  readonly kill: KillFn;
  /** How long to wait for the tree to die after SIGKILL. Default 2000 ms. */
  readonly killWaitMs?: number;
  readonly pollMs?: number;
}

/**
 * SIGTERM to the whole verified tree (group and escaped descendants, also after the leader exited), SIGKILL
 * after `graceMs`; resolves once nothing of it runs (zombies count as dead) or the kill wait ran out. Every
 * round re-scans, so nothing unverified is ever signalled.
 *
 * @example
 * ```ts
 * const report = await stopTree(view.process, { graceMs: 2000, kill: process.kill });
 * report.finalSignal; // 'SIGTERM' | 'SIGKILL' | null
 * ```
 */
export async function stopTree(record: ProcessRecord, options: StopOptions): Promise<StopReport> {
  const pollMs = options.pollMs ?? 25;
  let scan = await scanTree(record);
  if (!treeAlive(scan)) return { signalled: false, finalSignal: null, survivors: [] };
  signalTree(record, scan, 'SIGTERM', options.kill);
  scan = await waitGone(record, options.graceMs, pollMs);
  if (!treeAlive(scan)) return { signalled: true, finalSignal: 'SIGTERM', survivors: [] };
  signalTree(record, scan, 'SIGKILL', options.kill);
  scan = await waitGone(record, options.killWaitMs ?? 2000, pollMs);
  return { signalled: true, finalSignal: 'SIGKILL', survivors: [...scan.groupMembers, ...scan.escaped] };
}

async function waitGone(record: ProcessRecord, withinMs: number, pollMs: number): Promise<TreeScan> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const scan = await scanTree(record);
    if (!treeAlive(scan) || Date.now() >= deadline) return scan;
    await delay(Math.min(pollMs, Math.max(1, deadline - Date.now())));
  }
}
