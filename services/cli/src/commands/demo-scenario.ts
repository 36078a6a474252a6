import { fork } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isEvent } from '@demiurge/contracts';
import { DemiurgeApp } from '@demiurge/host';
import { runsReader, type ToolCallView } from '@demiurge/projector-runs';
import { filter, firstValueFrom } from 'rxjs';
import type { ExitCode } from '../cli-errors.js';
import type { HomePaths } from '../home.js';
import type { CommandIo } from '../io.js';
import { verifyCommand } from './verify.js';

type Step = {
  /** A step of another conversation: the one whose first user message contains this (a child's goal). */
  match?: string;
  content?: string;
  tool_calls?: { name: string; arguments: Record<string, unknown> }[];
};

interface Chapter {
  readonly title: string;
  readonly lines: string[];
}

/**
 * `demiurge demo`: a scripted scenario on the fake provider, end to end and non-interactive. Each chapter
 * starts a host on the same home (a restart each time): a turn with tool calls; a delegated child agent
 * and a terminal task; a plan-mode denial, then an approval; a cancellation during a tool call; a host
 * child process killed mid-tool-call and recovered; then rebuild and verify. Prints what happened and the
 * commands to look at it.
 */
export async function demoScenario(paths: HomePaths, options: { json: boolean }, io: CommandIo): Promise<ExitCode> {
  const workspace = join(paths.home, 'demo-workspace');
  mkdirSync(workspace, { recursive: true });
  const scripts = join(paths.home, 'demo-scripts');
  mkdirSync(scripts, { recursive: true });
  const chapters: Chapter[] = [];
  const say = (title: string, ...lines: string[]) => {
    chapters.push({ title, lines });
    if (!options.json) {
      io.out(`== ${title}`);
      for (const line of lines) io.out(`   ${line}`);
    }
  };
  const host = async (name: string, steps: Step[]) => {
    const file = join(scripts, `${name}.json`);
    writeFileSync(file, JSON.stringify(steps, null, 2));
    return { file, app: await DemiurgeApp.start({ home: paths.home, overrides: { workspace, fakeScript: file } }) };
  };
  const toolCalls = async (app: DemiurgeApp, turnId: string) =>
    (await runsReader(app.store).toolCalls()).filter((c) => c.turnId === turnId);

  // 1. A turn with tool calls.
  {
    const { app } = await host('1-tools', [
      {
        content: 'Let me write the plan down.',
        tool_calls: [
          {
            name: 'write_file',
            arguments: { path: 'notes/plan.md', content: '# Lisbon\n- Day 1: Alfama\n- Day 2: Belem\n' },
          },
          { name: 'list_dir', arguments: { path: 'notes' } },
          { name: 'read_file', arguments: { path: 'notes/plan.md' } },
        ],
      },
      { content: 'The plan is in notes/plan.md: Alfama on day 1, Belem on day 2.' },
    ]);
    try {
      const s = await app.submit({ text: 'Plan a two-day trip to Lisbon and save it.', newSession: true });
      const outcome = await s.outcome;
      const calls = await toolCalls(app, s.turnId);
      say(
        '1. a turn with tool calls',
        `session ${s.sessionId}, run ${s.runId}: ${outcome.status} in ${outcome.steps} model rounds`,
        ...calls.map((c) => `tool ${c.tool} ${JSON.stringify(c.arguments)} -> ${c.status}`),
        `answer: ${outcome.text}`,
      );
    } finally {
      await app.close();
    }
  }

  // 2. A delegated child agent and a detached terminal task, waited for.
  {
    const { app } = await host('2-delegation', [
      {
        content: 'Delegating the risks and starting the build.',
        tool_calls: [
          { name: 'delegate_task', arguments: { goal: 'List three risks of the Lisbon plan.', tools: ['read_file'] } },
          { name: 'shell', arguments: { command: 'echo building; sleep 1; echo built', background: true } },
        ],
      },
      { content: 'A child agent and a build are running.' },
      { content: 'Both are done: the risks are listed and the build passed.' },
      // The child agent's own conversation (its session starts with its goal).
      {
        match: 'List three risks of the Lisbon plan.',
        content: 'Reading the plan first.',
        tool_calls: [{ name: 'read_file', arguments: { path: 'notes/plan.md' } }],
      },
      {
        match: 'List three risks of the Lisbon plan.',
        content: 'Risks: Alfama is steep on foot; Belem queues are long; trams are crowded.',
      },
    ]);
    try {
      const s = await app.submit({ text: 'Check the plan for risks and run the build.', newSession: true });
      await s.outcome;
      const tasks = await app.runtime.controlPlane.listTasks(s.sessionId);
      const lines: string[] = [];
      for (const task of tasks) {
        const done = await app.worker.wait({ sessionId: s.sessionId, taskId: task.taskId }, 20_000);
        lines.push(
          `task ${task.taskId} ${task.kind} "${task.title}" -> ${done.status}` +
            (done.summary ? `: ${done.summary}` : done.exitCode !== null ? ` (exit ${done.exitCode})` : ''),
        );
      }
      // Their completion notices reach the session: a completion turn once it is idle.
      for (const deadline = Date.now() + 15_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
        const pending = await app.runtime.host.pendingTaskCompletions({ sessionId: s.sessionId });
        const live = (await app.liveRuns()).some((r) => r.sessionId === s.sessionId);
        if (pending.length === 0 && !live && !app.runtime.engine.isBusy(s.sessionId)) break;
      }
      const told = (await app.runtime.sessions.history(s.sessionId)).filter(
        (m) => m.role === 'user' && m.text.startsWith('[task '),
      ).length;
      lines.push(`the session was told in ${told} completion turn(s), each with the tasks' outcomes as its input`);
      say('2. delegation: a child agent and a terminal task', `session ${s.sessionId}`, ...lines);
    } finally {
      await app.close();
    }
  }

  // 3. Plan mode: a denial, then an approval of that exact call.
  let planSession = '';
  {
    const write = { name: 'write_file', arguments: { path: 'budget.md', content: 'About 180 EUR.\n' } };
    const { app } = await host('3-plan', [
      { tool_calls: [write] },
      { content: 'Writing needs your approval in plan mode.' },
    ]);
    try {
      const s = await app.submit({ text: 'Write the budget file.', newSession: true, plan: true });
      await s.outcome;
      planSession = s.sessionId;
      const [denied] = await toolCalls(app, s.turnId);
      await app.runtime.approvals.preApprove({
        sessionId: s.sessionId,
        tool: write.name,
        arguments: write.arguments,
        reason: 'the operator approved the budget file',
        actor: { kind: 'operator', id: 'demo' },
        expiresAt: new Date(Date.now() + 10 * 60_000).toISOString(),
      });
      say(
        '3a. plan mode denies a write',
        `session ${s.sessionId} (plan mode): ${denied?.tool} -> ${denied?.status} by ${denied?.denial?.policy}`,
        'the operator approves exactly that call (same tool, same arguments, once)',
      );
    } finally {
      await app.close();
    }
    const again = await host('3-plan-approved', [
      { content: '(first turn)' },
      { tool_calls: [write] },
      { content: 'budget.md written with your approval.' },
    ]);
    try {
      const s = await again.app.submit({ text: 'Approved: write it.', sessionId: planSession });
      const outcome = await s.outcome;
      const [call] = await toolCalls(again.app, s.turnId);
      say(
        '3b. the approved call runs once',
        `${call?.tool} -> ${call?.status}; budget.md says: ${readFileSync(join(workspace, 'budget.md'), 'utf8').trim()}`,
        `answer: ${outcome.text}`,
      );
    } finally {
      await again.app.close();
    }
  }

  // 4. A cancellation during a tool call.
  {
    const { app } = await host('4-cancel', [
      {
        tool_calls: [
          { name: 'shell', arguments: { command: 'sleep 30' } },
          { name: 'list_dir', arguments: { path: '.' } },
        ],
      },
      { content: 'never reached' },
    ]);
    try {
      const started = firstValueFrom(app.store.events$.pipe(filter((e) => e.type === 'tool_call.started')));
      const s = await app.submit({ text: 'Run the long job.', newSession: true });
      await started;
      await app.runtime.engine.cancel(s.runId, 'the user pressed stop');
      const outcome = await s.outcome;
      const calls = await toolCalls(app, s.turnId);
      const run = await app.runtime.runs.get(s.runId);
      say(
        '4. cancel during a tool call',
        `run ${s.runId}: ${outcome.status} (${run.reason}; resumable: ${run.resumable})`,
        ...calls.map((c) => `tool ${c.tool} -> ${c.status}${c.reason ? ` (${c.reason})` : ''}`),
      );
    } finally {
      await app.close();
    }
  }

  // 5. A host child process killed mid-tool-call, and the recovery.
  {
    const script = join(scripts, '5-crash.json');
    writeFileSync(
      script,
      JSON.stringify([
        { tool_calls: [{ name: 'shell', arguments: { command: 'echo once >> effects.log; sleep 30' } }] },
        { content: 'Recovered: the interrupted command is reported as unknown and was not run again.' },
      ]),
    );
    const bin = resolve(import.meta.dirname, '..', 'bin.js');
    const child = fork(
      bin,
      ['run', 'Append to the effects log.', '--home', paths.home, '--fake-script', script, '--workspace', workspace],
      {
        stdio: 'ignore',
      },
    );
    const observer = await DemiurgeApp.start({
      home: paths.home,
      overrides: { workspace },
      background: false,
      recoverRuns: false,
    });
    let runId = '';
    try {
      // Wait until the child host has started the shell call of its run (recorded before it runs).
      for (let i = 0; i < 300 && !runId; i++) {
        const live = new Set((await observer.liveRuns()).map((r) => r.runId));
        const started = (await observer.store.readAll({ types: ['tool_call.started'] })).find((e) =>
          live.has(String(e.meta.runId)),
        );
        if (started) runId = String(started.meta.runId);
        else await new Promise((r) => setTimeout(r, 100));
      }
      if (!runId) throw new Error('the child host never started its tool call');
      // Let the command take its effect first, so the log line shows it happened exactly once.
      for (let i = 0; i < 100 && !existsSync(join(workspace, 'effects.log')); i++)
        await new Promise((r) => setTimeout(r, 100));
    } finally {
      await observer.close();
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const { app } = await host('5-crash-recovered', [
      { tool_calls: [{ name: 'shell', arguments: { command: 'echo once >> effects.log; sleep 30' } }] },
      { content: 'Recovered: the interrupted command is reported as unknown and was not run again.' },
    ]);
    try {
      for (let i = 0; i < 200 && (await app.liveRuns()).some((r) => r.runId === runId); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const run = await app.runtime.runs.get(runId);
      const calls = (await runsReader(app.store).toolCalls()).filter((c) => c.runId === runId);
      const effects = (() => {
        try {
          return readFileSync(join(workspace, 'effects.log'), 'utf8').trim().split('\n').length;
        } catch {
          return 0;
        }
      })();
      say(
        '5. a host process killed mid-tool-call, then recovered',
        `the child host (pid ${child.pid}) was SIGKILLed while run ${runId} ran its shell call`,
        `a new host resumed it: run ${run.state}; ${calls.map((c) => `${c.tool} -> ${c.status}`).join(', ')}`,
        `effects.log has ${effects} line(s): the call was never run twice`,
        ...(await orphansStopped(app, calls)),
      );
    } finally {
      await app.close();
    }
  }

  // 6. Rebuild and verify.
  const quiet: CommandIo = { out: () => undefined, err: () => undefined };
  {
    const app = await DemiurgeApp.start({ home: paths.home, overrides: { workspace }, background: false });
    try {
      const report = await app.store.rebuild();
      say(
        '6. rebuild',
        `replayed ${report.eventsApplied} events into ${report.projectors.length} projections in ${report.durationMs} ms`,
      );
    } finally {
      await app.close();
    }
  }
  let verifyJson = '';
  const code = await verifyCommand(paths, { json: true }, { ...quiet, out: (t) => (verifyJson = t) });
  const verify = JSON.parse(verifyJson) as { ok: boolean; log: { eventsChecked: number; streams: number } };
  say(
    '7. verify',
    `${verify.ok ? 'ok' : 'VIOLATIONS FOUND'}: ${verify.log.eventsChecked} events in ${verify.log.streams} streams through their machines, invariants, projections equal to a rebuild`,
  );
  const next = [
    `demiurge status --home ${paths.home}`,
    `demiurge sessions list --home ${paths.home}`,
    `demiurge runs list --home ${paths.home}`,
    `demiurge tasks list --all --home ${paths.home}`,
    `demiurge events --home ${paths.home}`,
    `demiurge verify --home ${paths.home}`,
  ];
  if (options.json) io.out(JSON.stringify({ home: paths.home, chapters, verify, next }));
  else {
    io.out('');
    io.out('look at it:');
    for (const line of next) io.out(`   ${line}`);
  }
  return code;
}

/** What the new host's start did with the killed host's still-running shell processes (tool_call.process_stopped). */
async function orphansStopped(app: DemiurgeApp, calls: readonly ToolCallView[]): Promise<string[]> {
  const lines: string[] = [];
  for (const call of calls) {
    for (const e of await app.store.readStream(call.toolCallId)) {
      if (!isEvent(e, 'tool_call.process_stopped')) continue;
      const d = e.data;
      lines.push(
        `its ${call.tool} process group (pid ${d.pid}), left running by the killed host, was stopped (${d.signal})`,
      );
    }
  }
  return lines;
}
