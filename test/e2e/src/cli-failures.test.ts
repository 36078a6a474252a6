import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demiurge, tempHome } from './cli.js';
import { killWatched, type ServeProcess, startServe, watchCli, writeHostHome } from './serve-process.js';

const BUNDLED_CORE = join(import.meta.dirname, '..', '..', '..', 'agent');

let home: ReturnType<typeof tempHome>;
let serve: ServeProcess | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  killWatched();
  await serve?.stop('SIGKILL');
  serve = undefined;
  home.remove();
});

describe('failures at the CLI, said in one line', () => {
  it('a broken Agent Core (pipelines.yaml, agent.yaml) is a configuration error: exit 2 naming the file', async () => {
    const core = join(home.path, 'core');
    cpSync(BUNDLED_CORE, core, { recursive: true });
    writeHostHome(home.path, { extra: [`core: ${core}`] });
    writeFileSync(join(core, 'pipelines.yaml'), 'input:\n  serial: [base_input\n');
    for (const args of [['run', 'hi'], ['serve']]) {
      const run = await demiurge([...args, '--home', home.path]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/^demiurge: .*core\/pipelines\.yaml.*\n$/);
      expect(run.stderr).not.toMatch(/unexpected/);
    }
    const doctor = await demiurge(['doctor', '--home', home.path]);
    expect(doctor.code).toBe(2);
    expect(doctor.stdout).toMatch(/fail +core +does not load: .*core\/pipelines\.yaml/);
    cpSync(join(BUNDLED_CORE, 'pipelines.yaml'), join(core, 'pipelines.yaml'));
    writeFileSync(join(core, 'agent.yaml'), 'id: [default\n');
    const run = await demiurge(['run', 'hi', '--home', home.path]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/^demiurge: .*core\/agent\.yaml.*\n$/);
  });

  it('SIGKILL of the serving host under a run client: one line naming the run and that the next host resumes it', async () => {
    const ws = writeHostHome(home.path, {
      script: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] }, { content: 'ok' }],
      extra: ['plan_mode:', '  on_write: ask'],
    });
    serve = await startServe(home.path, ws);
    const run = watchCli(['run', 'write it', '--plan', '--home', home.path], { cwd: ws });
    const [, runId] = await run.stderrMatch(/run (run_\w+) waits for approval/);
    await serve.stop('SIGKILL');
    serve = undefined;
    const done = await run.exited;
    expect(done.code).toBe(1);
    const last = done.stderr.trim().split('\n').at(-1);
    expect(last).toBe(
      `demiurge: the host serving ${home.path} stopped during run ${runId}; the next host to start on this home resumes it (demiurge serve, or run again)`,
    );
    expect(done.stderr).not.toMatch(/no elements in sequence|unexpected/);

    // The next host resumes the run: it waits on the same approval, and finishes once it is granted.
    serve = await startServe(home.path, ws);
    const [, approvalId] = done.stderr.match(/waits for approval (apr_\w+)/)!;
    const grant = await demiurge(['approvals', 'grant', approvalId!, '--home', home.path]);
    expect(grant.code, grant.stderr).toBe(0);
    let status = '';
    for (let i = 0; i < 100 && status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const show = await demiurge(['runs', 'show', runId!, '--json', '--home', home.path]);
      status = (JSON.parse(show.stdout) as { run: { status: string } }).run.status;
    }
    expect(status).toBe('completed');
  }, 90_000);

  it('a run hosting in-process says which detached tasks closing cancelled and how to keep them', async () => {
    const ws = writeHostHome(home.path, {
      script: [
        { tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30', background: true } }] },
        { content: 'started it' },
      ],
    });
    const run = watchCli(['run', 'start the job', '--home', home.path], { cwd: ws });
    const done = await run.exited;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout.trim()).toBe('started it');
    expect(done.stderr).toMatch(
      /demiurge: (closing the in-process host cancelled 1 detached task|1 detached task did not start and waits? for the next host on this home): tsk_\w+ \(terminal\.exec: sleep 30\)/,
    );
    expect(done.stderr).toContain(`start "demiurge serve --home ${home.path}" first`);
    expect(done.stderr).toContain('or pass --wait');
  }, 60_000);

  it('a second serve on a served home is refused in one line', async () => {
    const ws = writeHostHome(home.path);
    serve = await startServe(home.path, ws);
    const second = await demiurge(['serve', '--home', home.path]);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      /^demiurge: another operator gateway is listening on .*operator\.sock; stop it first\n$/,
    );
  });
});
