#!/usr/bin/env node
// Re-records the golden event logs under test/golden/ from today's code, then their projection snapshots.
// Run it only when a change of meaning is intended (a new event, a projector that now reads a log
// differently): `node scripts/record-golden.mjs` after a build, then review the diff of test/golden/.
//   demo.jsonl      the log of `demiurge demo` (the scripted scenario: tools, delegation, plan mode,
//                   cancel, a crash and its recovery)
//   run-flow.jsonl  a short end-to-end flow: `init`, one `run` with a tool call, `runs show`
//   crash-*.jsonl   scenarios of the crash suite (test/crash: real `serve` children, real SIGKILL)
//   e2e-*.jsonl     scenarios of the end-to-end suite (test/e2e: the real CLI)
// The crash and e2e logs are written by the tests themselves (`recordGolden(name, home)` at the end of each
// scenario, active with DEMIURGE_GOLDEN_RECORD=1): this script runs those tests (SCENARIOS below). The
// snapshots (`<name>.projections.json`) are written by test/e2e/src/golden.test.ts with GOLDEN_UPDATE=1.
// `node scripts/record-golden.mjs crash-cancel e2e-task-admin` re-records only the named logs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

/** The crash and e2e scenarios that record a golden log: [log, test package, file, test name pattern]. */
const SCENARIOS = [
  ['crash-run-recovery', 'crash', 'src/recovery-paths.test.ts', '\\(c\\) resume after compaction'],
  ['crash-run-takeover', 'crash', 'src/recovery-paths.test.ts', '\\(e\\) a second host process'],
  ['crash-cancel', 'crash', 'src/gateway-paths.test.ts', '\\(b\\) operator.cancel during a tool call'],
  ['crash-completion-turn', 'crash', 'src/completion-turns.test.ts', "delegated task's completion turn"],
  ['crash-delivery-unknown', 'crash', 'src/delivery-unknown.test.ts', 'records it unknown'],
  ['crash-schedule-fire', 'crash', 'src/serving-host.test.ts', 'without delivery the answer is recorded'],
  ['e2e-approval-granted', 'e2e', 'src/approvals.test.ts', 'in-process: a blocked run --plan'],
  ['e2e-approval-denied', 'e2e', 'src/approvals.test.ts', 'deny: the run goes on without the call'],
  ['e2e-delegation', 'e2e', 'src/tools.test.ts', 'strict delegate_task'],
  ['e2e-task-admin', 'e2e', 'src/admin-flows.test.ts', 'tasks: delete is refused until cancelled'],
  ['e2e-completion-notice', 'e2e', 'src/completion-notices.test.ts', 'notice is settled'],
  ['e2e-gateway-submit', 'e2e', 'src/gateway.test.ts', 'gateway --stdio answers every request'],
];

const only = process.argv.slice(2);
const wanted = (name) => only.length === 0 || only.includes(name);

function runScenario([name, pkg, file, pattern]) {
  const before = existsSync(join(golden, `${name}.jsonl`)) ? statSync(join(golden, `${name}.jsonl`)).mtimeMs : 0;
  const run = spawnSync(
    process.execPath,
    [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', file, '-t', pattern],
    {
      cwd: join(root, 'test', pkg),
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEMIURGE_GOLDEN_RECORD: '1' },
    },
  );
  if (run.status !== 0) throw new Error(`the scenario of ${name}.jsonl failed (test/${pkg} ${file})`);
  const after = existsSync(join(golden, `${name}.jsonl`)) ? statSync(join(golden, `${name}.jsonl`)).mtimeMs : 0;
  if (after === before) throw new Error(`test/${pkg} ${file} -t "${pattern}" passed but did not record ${name}.jsonl`);
  const lines = readFileSync(join(golden, `${name}.jsonl`), 'utf8')
    .trim()
    .split('\n').length;
  process.stdout.write(`recorded ${name}.jsonl: ${lines} events\n`);
}

mkdirSync(golden, { recursive: true });
if (wanted('demo')) record('demo', (home) => demiurge(['demo', '--home', home, '--json'], { cwd: home }));
if (wanted('run-flow'))
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

for (const scenario of SCENARIOS) if (wanted(scenario[0])) runScenario(scenario);

const update = spawnSync(
  process.execPath,
  [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'src/golden.test.ts'],
  { cwd: join(root, 'test', 'e2e'), stdio: 'inherit', env: { ...process.env, GOLDEN_UPDATE: '1' } },
);
if (update.status !== 0) process.exit(update.status ?? 1);
// The snapshots in the repository's formatting (Biome), so a re-record shows only changes of content.
const format = spawnSync(join(root, 'node_modules', '.bin', 'biome'), ['check', '--write', golden], {
  stdio: 'inherit',
});
process.exit(format.status ?? 1);
