import { describe, expect, it } from 'vitest';
import { type CrashLoopReport, type Problem, runCrashLoop } from './crash-loop.js';
import { crashSeed } from './prng.js';

const HOMES = 4;
const kills = Number(process.env.CRASH_KILLS ?? 200);
const seed = crashSeed();

/** Splits the kills over the homes as evenly as possible (a home with none is not started). */
function share(total: number, homes: number): number[] {
  return Array.from({ length: homes }, (_, i) => Math.floor(total / homes) + (i < total % homes ? 1 : 0)).filter(
    (n) => n > 0,
  );
}

/** Problems grouped by check: how many, in which homes, and the first few in full. */
function summarize(problems: readonly Problem[]): string[] {
  const byCheck = new Map<string, Problem[]>();
  for (const p of problems) byCheck.set(p.check, [...(byCheck.get(p.check) ?? []), p]);
  return [...byCheck].map(
    ([check, list]) =>
      `${check}: ${list.length} problem(s); first: ${list
        .slice(0, 3)
        .map((p) => `[home ${p.home} ${p.cycle === 0 ? 'final' : `kill ${p.cycle}`}] ${p.detail}`)
        .join(' | ')}`,
  );
}

function describeHome(r: CrashLoopReport): string {
  return (
    `home ${r.index}: ${r.kills} kills in ${Math.round(r.durationMs / 1000)} s (cycle ${r.cycleMs.min}/${r.cycleMs.mean}/${r.cycleMs.max} ms), ` +
    `ready ${r.phaseMs.ready} ms, stopped-store check ${r.phaseMs.stoppedCheck} ms; ` +
    `${r.acknowledged}/${r.submitted} submits acknowledged, head ${r.head}; kills landed with a tool call running ` +
    `${r.landed.callsInFlight}, a delivery sending ${r.landed.sendsInFlight}, a live run ${r.landed.liveRuns}, ` +
    `a task active ${r.landed.tasksActive}; webhook: ${r.webhook.received} POSTs for ${r.webhook.keys} keys, ` +
    `${r.webhook.unknownReceived} unknown ones had reached it; deliveries ${JSON.stringify(r.deliveries)}; verify ${r.verifyRuns.count}x (${r.verifyRuns.totalMs} ms)`
  );
}

describe('crash and recovery (real demiurge serve, real SIGKILL)', () => {
  it(`survives ${kills} SIGKILLs under load: verify passes, nothing acknowledged is lost, no delivery twice, no orphaned task`, async () => {
    const shares = share(kills, HOMES);
    console.log(
      `crash seed ${seed} (CRASH_SEED=${seed} replays the kill moments); ${kills} kills over ${shares.length} homes`,
    );
    const started = Date.now();
    const reports = await Promise.all(
      shares.map((n, index) =>
        runCrashLoop({
          index,
          kills: n,
          seed: seed + index * 7919,
          log: (line) => console.log(line),
          keep: process.env.CRASH_KEEP === '1',
        }),
      ),
    );
    const seconds = Math.round((Date.now() - started) / 1000);
    for (const r of reports) console.log(describeHome(r));
    for (const r of reports) {
      for (const line of r.pendingDeliveries.slice(0, 3)) console.log(`home ${r.index} at the end: ${line}`);
      if (r.pendingDeliveries.length > 3) console.log(`home ${r.index}: ... ${r.pendingDeliveries.length} in all`);
    }
    const stderr = new Map<string, number>();
    for (const r of reports)
      for (const [line, n] of Object.entries(r.stderr)) stderr.set(line, (stderr.get(line) ?? 0) + n);
    for (const [line, n] of [...stderr].sort((a, b) => b[1] - a[1])) console.log(`host stderr ${n}x: ${line}`);
    const problems = reports.flatMap((r) => r.problems);
    const summary = summarize(problems);
    console.log(`crash loop: ${kills} kills in ${seconds} s, ${problems.length} problem(s) (seed ${seed})`);
    for (const line of summary) console.log(`  ${line}`);
    expect(summary, `seed ${seed}`).toEqual([]);
  }, 720_000);
});
