import type { Clock, IdGenerator } from '@demiurge/contracts';
import {
  controlPlaneProjectors,
  DurableWorkRuntime,
  HostWorkLifecycleRuntime,
  type KindRegistry,
  RuntimeControlPlane,
} from '@demiurge/control-plane';
import type { EventStore, Projector } from '@demiurge/event-store';
import { runsProjector } from '@demiurge/projector-runs';
import { sessionsProjector } from '@demiurge/projector-sessions';
import type { ModelProvider } from '@demiurge/providers';
import { RunRuntime, SessionRuntime, TurnAdmission } from '@demiurge/sessions';
import { ApprovalRuntime } from './approvals.js';
import { TurnEngine, type TurnEngineOptions } from './engine.js';
import { ToolRegistry } from './registry.js';
import type { ToolDefinition } from './tool.js';
import {
  createEvolveTool,
  createTaskTools,
  type DelegationLimits,
  shellTool,
  type TaskToolsOptions,
  withBackgroundShell,
  workspaceTools,
} from './tools/index.js';

/** The projectors a store needs for sessions, runs, turns and tasks (the engine reads all of them). */
export const turnProjectors: readonly Projector[] = [sessionsProjector, runsProjector, ...controlPlaneProjectors];

export interface TurnRuntimeOptions
  extends Omit<TurnEngineOptions, 'sessions' | 'runs' | 'admission' | 'approvals' | 'tools'> {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** This host process (run owner). */
  readonly owner: string;
  readonly provider: ModelProvider;
  /**
   * Default: the workspace tools (read_file, list_dir, write_file, edit_file, shell with `background`)
   * and the task tools (delegate_task, task_list, task_status, task_control, yield_until).
   */
  readonly tools?: readonly ToolDefinition[];
  /** Cancels a task through the host's task worker (single-flight process cleanup). */
  readonly cancelTask?: (ref: { sessionId: string; taskId: string }, reason: string) => Promise<unknown>;
  readonly delegationLimits?: Partial<DelegationLimits>;
  /** The Agent Core this host runs: the only `core_id` `delegate_task` accepts. */
  readonly coreId?: string;
  /** The slot ids a delegated child may select (or a function reading them from the call's pinned revision). */
  readonly knownSlots?: TaskToolsOptions['knownSlots'];
  readonly runLeaseMs?: number;
  /** The lease of durable work claims (deliveries, completion notices, schedule fires); default 30 s. */
  readonly workLeaseMs?: number;
  /** Add the `evolve_core` tool (an `evolver.run` task; the host sets it when it runs that kind). Default false. */
  readonly evolveTool?: boolean;
  /** The task kinds the control plane accepts (default: the control plane's). */
  readonly taskKinds?: KindRegistry;
}

/** Everything a turn needs, wired on one store. */
export interface TurnRuntime {
  readonly sessions: SessionRuntime;
  readonly runs: RunRuntime;
  readonly approvals: ApprovalRuntime;
  readonly controlPlane: RuntimeControlPlane;
  readonly work: DurableWorkRuntime;
  readonly host: HostWorkLifecycleRuntime;
  readonly tools: ToolRegistry;
  readonly engine: TurnEngine;
}

/**
 * Wires SessionRuntime, RunRuntime (cancelling child tasks through the control plane), approvals and the
 * TurnEngine on one store. The store must run {@link turnProjectors}.
 */
export function createTurnRuntime(options: TurnRuntimeOptions): TurnRuntime {
  const { store, clock, ids } = options;
  const work = new DurableWorkRuntime({
    store,
    clock,
    ids,
    owner: options.owner,
    ...(options.workLeaseMs ? { leaseMs: options.workLeaseMs } : {}),
  });
  const controlPlane = new RuntimeControlPlane({
    store,
    clock,
    ids,
    work,
    ...(options.taskKinds ? { kinds: options.taskKinds } : {}),
  });
  const sessions = new SessionRuntime({ store, ids });
  const runs = new RunRuntime({
    store,
    clock,
    ids,
    owner: options.owner,
    controlPlane,
    ...(options.runLeaseMs ? { leaseMs: options.runLeaseMs } : {}),
  });
  const approvals = new ApprovalRuntime({ store, clock, ids });
  const host = new HostWorkLifecycleRuntime({ store, clock, ids, work });
  const tools = new ToolRegistry();
  const defaults = () => [
    ...workspaceTools.map((t) => (t === shellTool ? withBackgroundShell(shellTool, controlPlane) : t)),
    ...createTaskTools({
      store,
      controlPlane,
      work,
      host,
      sessions,
      knownTools: () => tools.names(),
      ...(options.cancelTask ? { cancelTask: options.cancelTask } : {}),
      ...(options.delegationLimits ? { limits: options.delegationLimits } : {}),
      ...(options.knownSlots ? { knownSlots: options.knownSlots } : {}),
      ...(options.coreId ? { coreId: options.coreId } : {}),
    }),
    ...(options.evolveTool ? [createEvolveTool(controlPlane)] : []),
  ];
  for (const tool of options.tools ?? defaults()) tools.register(tool);
  const engine = new TurnEngine({
    notices: host,
    ...options,
    sessions,
    runs,
    approvals,
    admission: new TurnAdmission(),
    tools,
  });
  return { sessions, runs, approvals, controlPlane, work, host, tools, engine };
}
