import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fuzzSettings, mutatedDocument, yamlText } from '@demiurge/contracts/testing';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { compileCron, loadSchedules, parseScheduleFile, ScheduleFileError } from '../src/index.js';

/** A cron field: valid values, ranges and steps, and the odd ones a person writes. */
const cronField = fc.oneof(
  fc.constantFrom('*', '0', '5', '*/15', '1-5', '1,3,5', 'L', '?', 'MON', 'JAN'),
  fc.constantFrom('61', '-1', '*/0', '99-1', '1-', ',', 'x', '0x10', '31', '29', 'L-2', '5#3', '1/0'),
  fc.integer({ min: -5, max: 100 }).map(String),
);
const cron = fc.oneof(
  fc.array(cronField, { minLength: 5, maxLength: 5 }).map((f) => f.join(' ')),
  fc.array(cronField, { minLength: 6, maxLength: 6 }).map((f) => f.join(' ')),
  fc.array(cronField, { minLength: 0, maxLength: 8 }).map((f) => f.join('  ')),
  fc.constantFrom('0 0 31 2 *', '0 0 30 2 *', '0 0 29 2 1', '@daily', '@reboot', '0 9 * * 1-5'),
);
/** A schedule file from its real shape (docs/schedules.md). */
const validSchedule = fc.record(
  {
    cron,
    timezone: fc.constantFrom(
      'UTC',
      'Europe/Berlin',
      'America/New_York',
      'Asia/Kathmandu',
      'Mars/Base',
      'UTC+5',
      '',
      'utc',
      'Etc/GMT+14',
      'EST5EDT',
      'Australia/Lord_Howe',
      'Pacific/Chatham',
    ),
    prompt: fc.string({ minLength: 1, maxLength: 30 }),
    delivery: fc.oneof(
      fc.constantFrom('operator', 'webhook', 'email'),
      fc.record({ channel: fc.constantFrom('operator', 'webhook'), conversation_key: fc.string({ maxLength: 8 }) }),
    ),
    enabled: fc.boolean(),
    missed: fc.constantFrom('coalesce', 'skip', 'catch_up'),
    catch_up_limit: fc.integer({ min: 1, max: 1000 }),
  },
  { requiredKeys: ['cron', 'prompt'] },
);
const scheduleId = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('daily', 'morning-digest', 'a_1') },
  { weight: 1, arbitrary: fc.constantFrom('', 'Daily', '-x', 'x'.repeat(65), '../up', 'a b') },
);

const warnings: string[] = [];
process.on('warning', (w) => warnings.push(w.message));

/** The line a field's error names, when it has one, must be a line of the file. */
function expectClear(error: ScheduleFileError, file: string, text: string): void {
  expect(error.message.startsWith(file)).toBe(true);
  expect(error.detail).not.toBe('');
  if (error.line !== null) expect(error.line).toBeLessThanOrEqual(text.split('\n').length + 1);
  expect(error.message).not.toMatch(/\[object |unexpected error|\n\s+at /i);
  expect(error.message.length).toBeLessThan(800);
}

describe('schedule files fuzz', () => {
  it('parses a schedule that fires, or refuses with a ScheduleFileError naming the file, line and field', () => {
    fc.assert(
      fc.property(scheduleId, yamlText(mutatedDocument(validSchedule)), (id, text) => {
        const file = `schedules/${id}.yaml`;
        let result: ReturnType<typeof parseScheduleFile>;
        try {
          result = parseScheduleFile(id, file, text);
        } catch (error) {
          throw new Error(`parseScheduleFile threw ${String(error)} for ${file}:\n${text.slice(0, 2000)}`, {
            cause: error,
          });
        }
        if (result instanceof ScheduleFileError) return expectClear(result, file, text);
        // A loaded schedule has a next due time in its own zone: the scheduler can always plan it.
        const next = compileCron(result.cron, result.timezone).nextAfter(Date.parse('2026-06-01T00:00:00Z'));
        expect(next).not.toBeNull();
      }),
      fuzzSettings('schedule files', 300),
    );
    expect(warnings).toEqual([]);
  });

  it('loads the good files of a directory whatever the bad ones hold', async () => {
    const core = mkdtempSync(join(tmpdir(), 'demiurge-schedules-fuzz-'));
    afterAll(() => rmSync(core, { recursive: true, force: true }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(yamlText(mutatedDocument(validSchedule)), { minLength: 1, maxLength: 4 }),
        async (texts) => {
          rmSync(join(core, 'schedules'), { recursive: true, force: true });
          mkdirSync(join(core, 'schedules'));
          writeFileSync(join(core, 'schedules', 'zz-good.yaml'), 'cron: "0 9 * * *"\nprompt: good\n');
          for (const [i, t] of texts.entries()) writeFileSync(join(core, 'schedules', `f${i}.yaml`), t);
          const { schedules, errors } = await loadSchedules(core);
          expect(schedules.map((s) => s.id)).toContain('zz-good');
          expect(schedules.length + errors.length).toBe(texts.length + 1);
        },
      ),
      fuzzSettings('schedule directories', 40),
    );
  });

  it.each([
    ['an alias bomb', `prompt: x\ncron: "0 9 * * *"\n${bomb()}`, null, /invalid YAML: Excessive alias count/],
    ['a missing prompt', 'cron: "0 9 * * *"\n', 'prompt', /^missing \(a string is required\)$/],
    ['a complex key', 'prompt: x\ncron: "0 9 * * *"\n? [a, b]\n: c\n', '[ a, b ]', /unknown field/],
  ])('regression (fuzz): %s is a ScheduleFileError', (_name, text, field, detail) => {
    const result = parseScheduleFile('daily', 'schedules/daily.yaml', text);
    expect(result).toBeInstanceOf(ScheduleFileError);
    expect((result as ScheduleFileError).field).toBe(field);
    expect((result as ScheduleFileError).detail).toMatch(detail);
  });
});

function bomb(): string {
  const lines = ['a: &a [x,x,x,x,x,x,x,x,x]'];
  for (let i = 1; i < 9; i++) {
    const prev = String.fromCharCode(96 + i);
    const next = String.fromCharCode(97 + i);
    lines.push(`${next}: &${next} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`);
  }
  return `${lines.join('\n')}\n`;
}
