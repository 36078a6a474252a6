import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  carriesSpawnId,
  currentBootId,
  parseProcStat,
  parseStartMarker,
  processMatches,
  readProcStat,
  startMarkerOf,
} from './process-identity.js';

describe('process identity', () => {
  it('parses /proc/<pid>/stat, also when the command name holds spaces and parentheses', () => {
    const fields = Array.from({ length: 49 }, (_, i) => String(i + 3));
    fields[0] = 'S';
    fields[19] = '987654';
    const stat = parseProcStat(`1234 (a) b (c) ${fields.join(' ')}\n`);
    expect(stat).toEqual({ pid: 1234, state: 'S', ppid: 4, pgrp: 5, starttime: '987654' });
    expect(parseProcStat('garbage')).toBeUndefined();
  });

  it('builds and checks a linux start marker; a wrong marker or another boot never matches', async () => {
    const child = spawn('sleep', ['5'], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, DEMIURGE_SPAWN_ID: 'spn_t' },
    });
    try {
      const pid = child.pid!;
      const marker = startMarkerOf(pid)!;
      const stat = await readProcStat(pid);
      expect(marker).toBe(`linux:${currentBootId()}:${stat?.starttime}`);
      expect(parseStartMarker(marker)).toEqual({ bootId: currentBootId(), starttime: stat?.starttime });
      const record = { spawnId: 'spn_t', host: 'h', pid, pgid: pid, platform: 'linux' };
      expect(await processMatches({ ...record, startMarker: marker })).toBe(true);
      expect(await processMatches({ ...record, startMarker: `linux:${currentBootId()}:1` })).toBe(false);
      expect(await processMatches({ ...record, startMarker: `linux:another-boot:${stat?.starttime}` })).toBe(false);
      expect(await processMatches(record)).toBe(false); // no marker: never a match
      expect(await carriesSpawnId(pid, 'spn_t')).toBe(true);
      expect(await carriesSpawnId(pid, 'spn_other')).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
