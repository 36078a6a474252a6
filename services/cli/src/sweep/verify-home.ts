import type { CheckProblem } from '@demiurge/crash-sweep';
import { demiurgeChild } from './host-process.js';

/** The parts of `demiurge verify --json` the sweep reports. */
interface VerifyJson {
  readonly ok: boolean;
  readonly chain: { ok: boolean; firstBreak?: { position: number; reason: string } };
  readonly log: { violations: { position: number; message: string }[] };
  readonly invariants: { findings: { invariant: string; message: string }[] };
  readonly projections: {
    differences: { projector: string; collection: string; id: string; kind: string; fields?: unknown[] }[];
  };
}

/**
 * `demiurge verify --json --home H` as a child, once no host serves the home: the hash chain, every stream
 * through its lifecycle machine, the seed invariants, every projection equal to a rebuild. Its findings as
 * problems (`verify: …`); none when it passed.
 */
export async function verifyHome(home: string): Promise<CheckProblem[]> {
  return verifyProblems(await demiurgeChild(['verify', '--json', '--home', home])).problems;
}

/**
 * What a finished `demiurge verify --json` run found, as problems (`verify: hash chain`, `verify: log`,
 * `verify: invariant …`, `verify: projections equal a rebuild`, or why it gave no report); `ok` when it passed.
 */
export function verifyProblems(run: {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}): { readonly ok: boolean; readonly problems: CheckProblem[] } {
  let report: VerifyJson;
  try {
    report = JSON.parse(run.stdout) as VerifyJson;
  } catch {
    return {
      ok: false,
      problems: [{ check: 'verify: ran', detail: `verify exited ${run.code} without a JSON report: ${run.stderr}` }],
    };
  }
  const problems: CheckProblem[] = [
    ...(report.chain.firstBreak
      ? [
          {
            check: 'verify: hash chain',
            detail: `position ${report.chain.firstBreak.position}: ${report.chain.firstBreak.reason}`,
          },
        ]
      : []),
    ...report.log.violations.map((v) => ({ check: 'verify: log', detail: `position ${v.position}: ${v.message}` })),
    ...report.invariants.findings.map((f) => ({ check: `verify: invariant ${f.invariant}`, detail: f.message })),
    ...report.projections.differences.map((d) => ({
      check: 'verify: projections equal a rebuild',
      detail: `${d.projector} ${d.collection}/${d.id} ${d.kind}: ${JSON.stringify(d.fields ?? [])}`,
    })),
  ];
  if (run.code !== 0 && problems.length === 0) {
    problems.push({ check: 'verify: exit code', detail: `verify exited ${run.code}: ${run.stderr}` });
  }
  return { ok: run.code === 0 && report.ok, problems };
}
