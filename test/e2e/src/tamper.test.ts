import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, type tempHome } from './cli.js';
import { cliHome, copyHome, databaseOf, editBehindTheTriggers, inMemory } from './store-copies.js';

let base: ReturnType<typeof tempHome>;
beforeAll(async () => {
  base = await cliHome();
}, 60_000);
afterAll(() => base.remove());

let home: ReturnType<typeof tempHome>;
beforeEach(() => {
  home = copyHome(base.path);
});
afterEach(() => home.remove());

const cli = (...args: string[]) => demiurge([...args, '--home', home.path]);
const db = () => databaseOf(home.path);

/** The position of the first event of `type` in the home's log. */
function firstOf(type: string): number {
  const raw = inMemory(db());
  try {
    return raw.prepare('SELECT MIN(position) FROM events WHERE type = ?').pluck().get(type) as number;
  } finally {
    raw.close();
  }
}

const chainBreak = (position: number) =>
  `fail  chain: position ${position}: its content does not match its recorded hash: it was changed after it was appended (${position - 1} event(s) before it match)`;

describe('tamper evidence: verify recomputes the hash chain (real CLI)', () => {
  it('verify --head prints the head position and hash of an intact log', async () => {
    const head = await cli('verify', '--head');
    expect(head).toMatchObject({ code: 0, stderr: '' });
    const [, position, hash] = /^head (\d+) ([0-9a-f]{64})\n$/.exec(head.stdout) ?? [];
    const raw = inMemory(db());
    const last = raw.prepare('SELECT position, hex(hash) AS hash FROM events ORDER BY position DESC LIMIT 1').get() as {
      position: number;
      hash: string;
    };
    raw.close();
    expect([Number(position), hash]).toEqual([last.position, last.hash.toLowerCase()]);
    const json = JSON.parse((await cli('verify', '--head', '--json')).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ ok: true, head: { position: last.position, hash }, eventsChecked: last.position });
    const full = await cli('verify');
    expect(full.code).toBe(0);
    expect(full.stdout).toContain(
      `ok    chain: ${last.position} event(s) match their hashes; head ${position} ${hash}\n`,
    );
  });

  it('verify --expect-head: the log grown since passes through a kept head; one cut back below it does not', async () => {
    const printed = (await cli('verify', '--head')).stdout.trim();
    const [, position] = /^head (\d+) /.exec(printed) ?? [];
    expect((await cli('run', 'one more turn')).code).toBe(0);
    const grown = await cli('verify', '--expect-head', printed);
    expect(grown.code).toBe(0);
    expect(grown.stdout).toContain(`ok    kept head: the log passes through ${printed.slice('head '.length)}\n`);

    const kept = printed.slice('head '.length).replace(' ', ':');
    // the newest events removed, back to below the kept head
    editBehindTheTriggers(db(), `DELETE FROM events WHERE position >= ${position}`);
    const cut = await cli('verify', '--head', '--expect-head', kept);
    expect(cut.code).toBe(1);
    // the chain of what is left is sound: only the kept head shows the cut
    expect(cut.stdout).toMatch(/^ok {4}chain: \d+ event\(s\) match their hashes/m);
    expect(cut.stdout).toMatch(
      new RegExp(
        `^fail  kept head ${position} [0-9a-f]{64}: the log ends at position \\d+: the events after it were cut off$`,
        'm',
      ),
    );
    const bad = await cli('verify', '--expect-head', 'yesterday');
    expect([bad.code, bad.stderr]).toEqual([
      2,
      'demiurge: --expect-head must be <position>:<hash> as "demiurge verify --head" printed it (64 hex digits), not "yesterday"\n',
    ]);
  });

  it('names the position of a recorded model answer edited behind the triggers', async () => {
    const position = firstOf('turn.model_responded');
    editBehindTheTriggers(
      db(),
      `UPDATE events SET data = json_set(data, '$.content', 'Wire the money to account 42.') WHERE position = ${position}`,
    );
    const run = await cli('verify');
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`${chainBreak(position)}\n`);
    const head = await cli('verify', '--head');
    expect([head.code, head.stdout]).toEqual([1, `${chainBreak(position)}\n`]);
  });

  it('names the position of an event whose meta.actor was edited behind the triggers', async () => {
    const position = firstOf('run.started');
    editBehindTheTriggers(
      db(),
      `UPDATE events SET meta = json_set(meta, '$.actor', json('{"kind":"operator","id":"mallory"}')) WHERE position = ${position}`,
    );
    const run = await cli('verify');
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`${chainBreak(position)}\n`);
    expect(run.stdout).toMatch(/^verify: 1 problem\(s\) found$/m);
  });

  it('still names it after rebuild made the projections agree with the edited log', async () => {
    const position = firstOf('session.created');
    editBehindTheTriggers(
      db(),
      `UPDATE events SET data = json_set(data, '$.title', 'a title nobody gave') WHERE position = ${position}`,
    );
    expect((await cli('rebuild')).code).toBe(0);
    const sessions = await cli('sessions', 'list');
    expect(sessions.stdout).toContain('a title nobody gave');
    const run = await cli('verify', '--json');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as { chain: unknown; projections: { ok: boolean } };
    expect(report.projections.ok).toBe(true);
    expect(report.chain).toMatchObject({
      ok: false,
      firstBreak: { position, reason: expect.stringMatching(/changed after it was appended/) },
    });
  });
});
