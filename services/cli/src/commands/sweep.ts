import { resolve } from 'node:path';
import {
  formatCrashPoint,
  formatSweepResult,
  type PointOutcome,
  parseCrashPoint,
  type SweepResult,
  sweepCrashPoints,
} from '@demiurge/crash-sweep';
import { CoreLoadError, DEFAULT_CORE_DIR, loadCore } from '@demiurge/host';
import { ExitCode, UsageError } from '../cli-errors.js';
import { coreProblem } from '../core-dir.js';
import type { CommandIo } from '../io.js';
import { hostDriver } from '../sweep/host-driver.js';
import { HostStartError } from '../sweep/host-process.js';
import { SCENARIOS } from '../sweep/scenarios.js';

/** The options of `demiurge sweep`, as commander parsed them. */
export interface SweepCliOptions {
  readonly core?: string;
  readonly scenario?: readonly string[];
  readonly sample?: number;
  readonly at?: readonly string[];
  readonly json: boolean;
  /** Keep the directory (core, home, commit trace) of every run that found a problem. */
  readonly keep?: boolean;
  /** Hidden: a host that answers a submit before its commit, to see a failure reported. */
  readonly injectBug?: 'ack-before-commit';
}

/**
 * `demiurge sweep`: the crash-point sweep of the scripted scenarios on the real host with the given core (or
 * the bundled one). Prints per scenario its commits, the crash points planned and covered and every problem
 * with its crash point (with `--json`, one document). Exit 1 when any scenario has a problem.
 */
export async function sweepCommand(o: SweepCliOptions, io: CommandIo): Promise<ExitCode> {
  const core = o.core === undefined ? undefined : resolve(o.core);
  if (core) {
    const problem = coreProblem(core);
    if (problem) throw new UsageError(`--core: ${problem}`);
  }
  try {
    await loadCore(core ?? DEFAULT_CORE_DIR);
  } catch (err) {
    throw err instanceof CoreLoadError && core ? new UsageError(`--core: ${err.message}`) : err;
  }
  const at = new Set<string>();
  for (const value of o.at ?? []) {
    try {
      at.add(formatCrashPoint(parseCrashPoint(value)));
    } catch (err) {
      throw new UsageError(`--at: ${(err as Error).message}`);
    }
  }
  const wanted = new Set(o.scenario ?? SCENARIOS.map((s) => s.name));
  const scenarios = SCENARIOS.filter((s) => wanted.has(s.name));
  const kept = new Map<string, string>();
  const driver = hostDriver({
    // An injected bug's lost turn never ends: 10 s of waiting for it is enough to report it.
    ...(o.injectBug ? { injectBug: o.injectBug, settleMs: 10_000 } : {}),
    ...(o.keep
      ? { keep: 'failing', onKept: (dir, crash) => kept.set(crash ? formatCrashPoint(crash) : 'uncrashed', dir) }
      : {}),
  });
  const progress = !o.json || io.progress !== undefined;
  const results: ScenarioJson[] = [];
  for (const scenario of scenarios) {
    const points: PointJson[] = [];
    kept.clear();
    if (progress) io.err(`${scenario.name}: counting its commits (an uncrashed run)`);
    const sweeping = sweepCrashPoints({
      scenario,
      driver,
      ...(core ? { coreDir: core } : {}),
      ...(o.sample === undefined ? {} : { sample: o.sample }),
      ...(at.size > 0 ? { select: (point) => at.has(formatCrashPoint(point)) } : {}),
      onPoint: (p: PointOutcome) => {
        points.push({
          point: formatCrashPoint(p.point),
          label: p.label,
          reached: p.reached,
          problems: p.problems.length,
          durationMs: p.durationMs,
        });
        if (progress) io.err(`  ${scenario.name} ${describePoint(p)}`);
      },
    });
    let result: SweepResult;
    try {
      result = await sweeping;
    } catch (err) {
      // A host that never served (its core fails at start): said plainly, not as a crash of this command.
      if (!(err instanceof HostStartError)) throw err;
      io.err(`demiurge: ${scenario.name}: ${err.message}`);
      return ExitCode.failure;
    }
    const done: ScenarioJson = { ...result, points, ...(o.keep ? { kept: Object.fromEntries(kept) } : {}) };
    results.push(done);
    if (!o.json) io.out(renderResult(done, core));
  }
  const problems = results.reduce((n, r) => n + r.problems.length, 0);
  if (o.json) {
    io.out(JSON.stringify({ ok: problems === 0, core: core ?? null, problems, scenarios: results }));
  } else {
    const on = core ?? 'the bundled core';
    io.out(
      problems === 0
        ? `sweep: ${results.length} scenario(s) on ${on}: no problems`
        : `sweep: ${results.length} scenario(s) on ${on}: ${problems} problem(s)`,
    );
  }
  return problems === 0 ? ExitCode.ok : ExitCode.failure;
}

/** One scenario in the JSON document: its sweep result, each point's run, the directories kept. */
interface ScenarioJson extends SweepResult {
  readonly points: readonly PointJson[];
  /** With `--keep`: the directory (`core/`, `home/`, `commits.jsonl`) of each run with a problem, by point. */
  readonly kept?: Readonly<Record<string, string>>;
}

/** One crash point's run in the JSON document. */
interface PointJson {
  readonly point: string;
  /** The point named with its commit's events (from the crashed host's trace). */
  readonly label: string;
  /** The host crashed there (false: that run made fewer commits). */
  readonly reached: boolean;
  readonly problems: number;
  readonly durationMs: number;
}

/** `3:before commit 3 before (turn.started, …): ok, 4.1 s` for the progress lines. */
function describePoint(p: PointOutcome): string {
  const outcome = !p.reached ? 'not reached' : p.problems.length === 0 ? 'ok' : `${p.problems.length} problem(s)`;
  return `${formatCrashPoint(p.point)} ${p.label}: ${outcome}, ${(p.durationMs / 1000).toFixed(1)} s`;
}

/** The scenario's summary, every problem with its crash point, and how to rerun the failing points. */
function renderResult(result: ScenarioJson, core: string | undefined): string {
  const lines = [formatSweepResult(result, Number.POSITIVE_INFINITY)];
  const points = [...new Set(result.problems.map((p) => p.point.split(' ')[0]!))].filter((p) => p !== 'uncrashed');
  const on = core ? ` --core ${core}` : '';
  if (points.length > 0)
    lines.push(`  rerun: demiurge sweep${on} --scenario ${result.scenario} --at ${points.join(' ')}`);
  for (const [point, dir] of Object.entries(result.kept ?? {})) lines.push(`  kept ${point}: ${dir}`);
  return lines.join('\n');
}
