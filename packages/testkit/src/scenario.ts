import fc from 'fast-check';

/** What the simulated model does in one turn: a tool call per entry (with its fault), then a final answer. */
export type ToolFault = 'ok' | 'fail' | 'hang';
/** A provider fault at model round `atStep` of the turn: an error, or a call that never answers (until cancelled). */
export type ProviderFault = { readonly kind: 'error' | 'hang'; readonly atStep: number } | null;
/**
 * How a simulated process ends: exits 0, exits 1, is killed by a signal (`crash`), hangs until cancelled or
 * its host dies (`hang`), or hangs until its own 600 s timeout (`slow`: it fires on the virtual clock).
 */
export type ProcessFault = 'ok' | 'fail' | 'crash' | 'hang' | 'slow';
/** How the simulated webhook sink answers a send: delivered, refused (retryable), timed out, or delivered but then reset. */
export type SinkFault = 'ok' | 'fail' | 'timeout' | 'ambiguous';

/** One step of a scenario. Every action carries its own random choices, so a shrunk trace replays alone. */
export type SimAction =
  | {
      readonly kind: 'submit';
      readonly tools: readonly ToolFault[];
      readonly provider: ProviderFault;
      /** In plan mode: each call of the (external) simulated tool asks the operator's approval first. */
      readonly plan?: boolean;
    }
  | { readonly kind: 'approve'; readonly pick: number; readonly grant: boolean }
  | { readonly kind: 'task'; readonly outcome: ProcessFault }
  | { readonly kind: 'dispatch'; readonly sink: SinkFault }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'cancel'; readonly pick: number }
  /** The operator pauses a live run (`demiurge runs pause`): it stops at its next step boundary. */
  | { readonly kind: 'pause'; readonly pick: number }
  /** The operator resumes a paused run, else a waiting or blocked one (`demiurge runs resume`). */
  | { readonly kind: 'resume'; readonly pick: number }
  | { readonly kind: 'cancelTask'; readonly pick: number }
  | { readonly kind: 'deleteTask'; readonly pick: number; readonly archive: boolean }
  | { readonly kind: 'schedule' }
  | { readonly kind: 'resolve' }
  | { readonly kind: 'recover' }
  | { readonly kind: 'crash'; readonly restart: 'same' | 'second' };

const toolFault = fc.constantFrom<ToolFault>('ok', 'ok', 'ok', 'fail', 'hang');
// Cross-shrinking lets a shrunk trace drop a provider fault that plays no part in the failure.
const providerFault: fc.Arbitrary<ProviderFault> = fc.oneof(
  { withCrossShrink: true },
  { weight: 6, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('error' as const, 'hang' as const), atStep: fc.nat(2) }) },
);

const submitArb: fc.Arbitrary<SimAction> = fc.record(
  {
    kind: fc.constant('submit' as const),
    tools: fc.array(toolFault, { maxLength: 2 }),
    provider: providerFault,
    plan: fc.constantFrom(false, false, false, true),
  },
  { requiredKeys: ['kind', 'tools', 'provider'] },
);

/** One action, weighted toward the common ones (submit, dispatch). */
export const simActionArb: fc.Arbitrary<SimAction> = fc.oneof(
  { weight: 5, arbitrary: submitArb },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('task' as const),
      outcome: fc.constantFrom<ProcessFault>('ok', 'fail', 'crash', 'hang', 'slow'),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('dispatch' as const),
      sink: fc.constantFrom<SinkFault>('ok', 'ok', 'ok', 'ok', 'fail', 'timeout', 'ambiguous'),
    }),
  },
  // Small steps, a lease expiry (past the 30 s leases), and a clock jump of hours.
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.constantFrom(1_000, 5_000, 31_000, 3_600_000),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(7) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('pause' as const), pick: fc.nat(7) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('resume' as const), pick: fc.nat(7) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancelTask' as const), pick: fc.nat(7) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('deleteTask' as const), pick: fc.nat(7), archive: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'resolve' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('approve' as const), pick: fc.nat(3), grant: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'schedule' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'recover' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('crash' as const),
      restart: fc.constantFrom('same' as const, 'second' as const),
    }),
  },
);

/**
 * A scenario's actions: a first turn, then up to `maxActions - 1` more actions (lengths spread evenly, not
 * biased to short lists). fast-check shrinks a failing list to the shortest one that still fails.
 */
export function scenarioArb(maxActions = 8): fc.Arbitrary<SimAction[]> {
  return fc
    .tuple(submitArb, fc.array(simActionArb, { maxLength: Math.max(0, maxActions - 1), size: 'max' }))
    .map(([first, rest]) => [first, ...rest]);
}

/** The actions of one seed, as the simulator's fast-check run generates them (the same seed gives the same list). */
export function actionsOfSeed(seed: number, maxActions = 8): SimAction[] {
  let first: SimAction[] | undefined;
  fc.check(
    fc.property(scenarioArb(maxActions), (actions) => {
      first ??= actions;
      return true;
    }),
    { seed, numRuns: 1 },
  );
  return first ?? [];
}

/** One line per action, for a trace a person reads. */
export function describeAction(a: SimAction): string {
  switch (a.kind) {
    case 'submit':
      return `submit${a.plan ? ' in plan mode' : ''} (tools: ${a.tools.join(', ') || 'none'}${a.provider ? `; provider ${a.provider.kind} at round ${a.provider.atStep}` : ''})`;
    case 'approve':
      return `${a.grant ? 'grant' : 'deny'} open approval #${a.pick}`;
    case 'task':
      return `submit a detached task (process ${a.outcome})`;
    case 'dispatch':
      return `dispatch deliveries (sink ${a.sink})`;
    case 'advance':
      return `advance the clock ${a.ms} ms`;
    case 'cancel':
      return `cancel live run #${a.pick}`;
    case 'pause':
      return `pause live run #${a.pick}`;
    case 'resume':
      return `resume paused run #${a.pick} (else a waiting or blocked one)`;
    case 'cancelTask':
      return `cancel detached task #${a.pick}`;
    case 'deleteTask':
      return `${a.archive ? 'archive' : 'delete'} task #${a.pick} (any status: the machine decides)`;
    case 'schedule':
      return "scheduler round (the core's due schedule fires, each a turn)";
    case 'resolve':
      return 'resolve unknown deliveries (as the sink saw them)';
    case 'recover':
      return 'recovery round (expired leases, unknown sends, runs whose owner is gone)';
    case 'crash':
      return `crash the host, restart ${a.restart === 'same' ? 'on the same store' : 'as a second host'}`;
  }
}
