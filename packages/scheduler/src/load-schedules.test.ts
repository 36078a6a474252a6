import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScheduleFileError } from './errors.js';
import { loadSchedules, parseScheduleFile } from './load-schedules.js';
import { scheduleEventId, scheduleSignature } from './signature.js';

let core: string;
beforeEach(() => {
  core = mkdtempSync(join(tmpdir(), 'demiurge-core-'));
  mkdirSync(join(core, 'schedules'));
});
afterEach(() => rmSync(core, { recursive: true, force: true }));

const write = (name: string, text: string) => writeFileSync(join(core, 'schedules', name), text);
const parse = (text: string, id = 'daily') => parseScheduleFile(id, `schedules/${id}.yaml`, text);

describe('loadSchedules', () => {
  it('loads every valid file with its defaults, keyed by file name', async () => {
    write(
      'morning-digest.yaml',
      [
        'cron: "0 8 * * 1-5"',
        'timezone: Europe/Berlin',
        'prompt: |',
        '  Summarise what happened overnight.',
        'delivery:',
        '  channel: webhook',
        '  conversation_key: team-room',
        'missed: catch_up',
        'catch_up_limit: 3',
      ].join('\n'),
    );
    write('tick.yaml', 'cron: "*/30 * * * * *"\nprompt: ping\nenabled: false\n');
    write('notes.txt', 'not a schedule');
    const { schedules, errors } = await loadSchedules(core);
    expect(errors).toEqual([]);
    expect(schedules.map((s) => s.id)).toEqual(['morning-digest', 'tick']);
    expect(schedules[0]).toMatchObject({
      id: 'morning-digest',
      file: 'schedules/morning-digest.yaml',
      cron: '0 8 * * 1-5',
      timezone: 'Europe/Berlin',
      prompt: 'Summarise what happened overnight.',
      delivery: { channel: 'webhook', conversation_key: 'team-room' },
      enabled: true,
      missed: 'catch_up',
      catchUpLimit: 3,
    });
    expect(schedules[1]).toMatchObject({ timezone: 'UTC', delivery: null, enabled: false, missed: 'coalesce' });
    expect(schedules[1]!.catchUpLimit).toBe(10);
  });

  it('reports a bad file by file, field and line, and still loads the others', async () => {
    write('a-good.yaml', 'cron: "0 9 * * *"\nprompt: hello\n');
    write('bad-cron.yaml', 'prompt: hello\ncron: "61 * * * *"\n');
    write('bad-zone.yaml', 'cron: "0 9 * * *"\ntimezone: Mars/Base\nprompt: hello\n');
    write('bad-yaml.yaml', 'cron: "0 9 * * *"\nprompt: [unclosed\n');
    write('z-good.yaml', 'cron: "0 10 * * *"\nprompt: bye\n');
    const { schedules, errors } = await loadSchedules(core);
    expect(schedules.map((s) => s.id)).toEqual(['a-good', 'z-good']);
    expect(errors.map((e) => e.message)).toEqual([
      'schedules/bad-cron.yaml:2: cron: Invalid value for minute: 61',
      expect.stringMatching(/^schedules\/bad-yaml\.yaml:\d+: invalid YAML: /),
      'schedules/bad-zone.yaml:2: timezone: unknown time zone "Mars/Base" (use an IANA name such as Europe/Berlin or UTC)',
    ]);
    expect(errors[0]).toBeInstanceOf(ScheduleFileError);
    expect(errors[0]).toMatchObject({
      file: 'schedules/bad-cron.yaml',
      scheduleId: 'bad-cron',
      field: 'cron',
      line: 2,
    });
    expect(errors[0]!.toJSON()).toEqual({ code: 'invalid_spec', message: errors[0]!.message });
  });

  it('has no schedules without a schedules directory', async () => {
    rmSync(join(core, 'schedules'), { recursive: true });
    expect(await loadSchedules(core)).toEqual({ schedules: [], errors: [] });
  });
});

describe('parseScheduleFile', () => {
  it('rejects unknown fields, wrong types, bad ids and missing fields, naming them', () => {
    const unknown = parse('cron: "0 9 * * *"\nprompt: hi\nretries: 3\n') as ScheduleFileError;
    expect(unknown).toMatchObject({ field: 'retries', line: 3 });
    expect(unknown.message).toMatch(/^schedules\/daily\.yaml:3: retries: unknown field \(known: cron, timezone/);
    expect(parse('cron: "0 9 * * *"\nprompt: hi\nenabled: "yes"\n')).toMatchObject({ field: 'enabled', line: 3 });
    expect(parse('cron: "0 9 * * *"\nprompt: hi\nmissed: later\n')).toMatchObject({ field: 'missed', line: 3 });
    expect(parse('cron: "0 9 * * *"\nprompt: hi\ndelivery:\n  channel: fax\n')).toMatchObject({
      field: 'delivery.channel',
      line: 4,
    });
    expect(parse('cron: "0 9 * * *"\nprompt: hi\ndelivery:\n  channel: operator\n  to: x\n')).toMatchObject({
      field: 'delivery.to',
      line: 5,
    });
    expect(parse('cron: "0 9 * * *"\nprompt: hi\ncatch_up_limit: 0\n')).toMatchObject({ field: 'catch_up_limit' });
    expect(parse('cron: "0 9 * * *"\n')).toMatchObject({ field: 'prompt', line: null });
    expect(parse('- just\n- a list\n')).toMatchObject({ field: null });
    expect(parse('cron: "0 9 * * *"\nprompt: hi\n', 'Daily Digest')).toMatchObject({
      field: null,
      detail: expect.stringMatching(/"Daily Digest" is not a schedule id/),
    });
  });

  it('reads `delivery: operator` as `delivery: { channel: operator }` (same signature); an unknown shorthand is refused', () => {
    const short = parse('cron: "0 9 * * *"\nprompt: hi\ndelivery: operator\n');
    const long = parse('cron: "0 9 * * *"\nprompt: hi\ndelivery: { channel: operator }\n');
    expect(short).toMatchObject({ delivery: { channel: 'operator' } });
    expect((short as { signature: string }).signature).toBe((long as { signature: string }).signature);
    expect(parse('cron: "0 9 * * *"\nprompt: hi\ndelivery: fax\n')).toMatchObject({ field: 'delivery.channel' });
  });

  it('gives each definition a signature that only its firing-relevant fields change', () => {
    const base = parse('cron: "0 9 * * *"\nprompt: hi\n');
    const same = parse('cron: "0  9 * * *"\nprompt: hi\nenabled: false\nmissed: skip\ncatch_up_limit: 2\n');
    const edits = [
      'cron: "0 10 * * *"\nprompt: hi\n',
      'cron: "0 9 * * *"\nprompt: hello\n',
      'cron: "0 9 * * *"\nprompt: hi\ntimezone: Europe/Berlin\n',
      'cron: "0 9 * * *"\nprompt: hi\ndelivery: { channel: operator }\n',
    ].map((text) => parse(text));
    const signature = (s: unknown) => (s as { signature: string }).signature;
    expect(signature(same)).toBe(signature(base));
    expect(new Set([base, ...edits].map(signature)).size).toBe(5);
    expect(signature(base)).toBe(
      scheduleSignature({ cron: '0 9 * * *', timezone: 'UTC', prompt: 'hi', delivery: null }),
    );
    expect(scheduleEventId('default', 'daily')).toMatch(/^sch_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(scheduleEventId('default', 'daily')).toBe(scheduleEventId('default', 'daily'));
    expect(scheduleEventId('other', 'daily')).not.toBe(scheduleEventId('default', 'daily'));
  });
});
