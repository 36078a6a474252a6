#!/usr/bin/env node
// Re-records the golden event logs under test/golden/ from today's code, then their projection snapshots.
// Run it only when a change of meaning is intended (a new event, a projector that now reads a log
// differently): `node scripts/record-golden.mjs` after a build, then review the diff of test/golden/.
//   demo.jsonl      the log of `demiurge demo` (the scripted scenario: tools, delegation, plan mode,
//                   cancel, a crash and its recovery)
//   run-flow.jsonl  a short end-to-end flow: `init`, one `run` with a tool call, `runs show`
// The snapshots (`<name>.projections.json`) are written by test/e2e/src/golden.test.ts with GOLDEN_UPDATE=1.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'services', 'cli', 'dist', 'bin.js');
const golden = join(root, 'test', 'golden');

function demiurge(args, options = {}) {
  const run = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  if (run.status !== 0) throw new Error(`demiurge ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return run.stdout;
}

function record(name, build) {
  const home = mkdtempSync(join(tmpdir(), `demiurge-golden-${name}-`));
  try {
    build(home);
    const log = demiurge(['events', '--json', '--home', home]);
    writeFileSync(join(golden, `${name}.jsonl`), log);
    process.stdout.write(`recorded ${name}.jsonl: ${log.trim().split('\n').length} events\n`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

mkdirSync(golden, { recursive: true });
record('demo', (home) => demiurge(['demo', '--home', home, '--json'], { cwd: home }));
record('run-flow', (home) => {
  const workspace = join(home, 'ws');
  mkdirSync(workspace, { recursive: true });
  const script = [
    {
      content: 'Writing the note.',
      tool_calls: [{ name: 'write_file', arguments: { path: 'note.txt', content: 'hi\n' } }],
    },
    { content: 'I wrote note.txt.' },
  ];
  writeFileSync(join(home, 'script.json'), JSON.stringify(script));
  demiurge(['init', '--home', home]);
  writeFileSync(
    join(home, 'config.yaml'),
    [
      'provider:',
      '  name: fake',
      '  fake_script: script.json',
      `workspace: ${workspace}`,
      'scheduler:',
      '  enabled: false',
      '',
    ].join('\n'),
  );
  const reply = JSON.parse(demiurge(['run', 'write a note', '--home', home, '--json'], { cwd: home }));
  demiurge(['runs', 'show', reply.runId ?? reply.run_id, '--home', home]);
});

const update = spawnSync(
  process.execPath,
  [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'src/golden.test.ts'],
  { cwd: join(root, 'test', 'e2e'), stdio: 'inherit', env: { ...process.env, GOLDEN_UPDATE: '1' } },
);
process.exit(update.status ?? 1);
