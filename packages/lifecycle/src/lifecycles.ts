import type { Lifecycle } from './define-lifecycle.js';
import { approvalLifecycle } from './machines/approval.machine.js';
import { coreLifecycle } from './machines/core.machine.js';
import { deliveryLifecycle } from './machines/delivery.machine.js';
import { mcpServerLifecycle } from './machines/mcp-server.machine.js';
import { runLifecycle } from './machines/run.machine.js';
import { scheduleInstanceLifecycle } from './machines/schedule-instance.machine.js';
import { sessionLifecycle } from './machines/session.machine.js';
import { slotLifecycle } from './machines/slot.machine.js';
import { taskLifecycle } from './machines/task.machine.js';
import { toolCallLifecycle } from './machines/tool-call.machine.js';
import { turnLifecycle } from './machines/turn.machine.js';
import { workLifecycle } from './machines/work.machine.js';

/**
 * Every aggregate's lifecycle, in docs order. One per stream type.
 * @example
 * for (const lifecycle of lifecycles) console.log(lifecycle.streamType, lifecycle.states.length);
 */
export const lifecycles = [
  sessionLifecycle,
  runLifecycle,
  turnLifecycle,
  toolCallLifecycle,
  taskLifecycle,
  workLifecycle,
  deliveryLifecycle,
  scheduleInstanceLifecycle,
  approvalLifecycle,
  slotLifecycle,
  mcpServerLifecycle,
  coreLifecycle,
] as const satisfies readonly Lifecycle[];

const byStreamType = new Map<string, Lifecycle>(lifecycles.map((lifecycle) => [lifecycle.streamType, lifecycle]));

/**
 * The lifecycle whose events live on streams of `streamType`, or `undefined` when none does.
 * @example
 * lifecycleFor('task') === taskLifecycle; // true
 */
export function lifecycleFor(streamType: string): Lifecycle | undefined {
  return byStreamType.get(streamType);
}
