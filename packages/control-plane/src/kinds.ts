import { DeliveryId, TaskId, type TaskKind } from '@demiurge/contracts';
import { z } from 'zod';
import { UnknownKindError } from './errors.js';

/** A registry of kinds, each with the zod schema of its input (tasks) or payload (work). */
export interface KindRegistry {
  readonly kinds: readonly string[];
  /** The schema of a kind; an unknown kind throws {@link UnknownKindError}. */
  schema(kind: string): z.ZodType;
  has(kind: string): boolean;
}

export function createKindRegistry(aggregate: 'task' | 'work', entries: Record<string, z.ZodType>): KindRegistry {
  const map = new Map(Object.entries(entries));
  return {
    kinds: [...map.keys()],
    has: (kind) => map.has(kind),
    schema(kind) {
      const schema = map.get(kind);
      if (!schema) throw new UnknownKindError(aggregate, kind, [...map.keys()]);
      return schema;
    },
  };
}

/**
 * The task-ledger kinds (seed 003) and their inputs. Any other kind, such as `tool.call`, is refused:
 * foreground turns and tool calls are never tasks.
 */
export const taskKindInputs: Record<TaskKind, z.ZodType> = {
  'agent.spawn': z.object({
    goal: z.string().min(1),
    coreId: z.string().min(1).optional(),
    contextMode: z.enum(['isolated', 'fork']).default('isolated'),
    tools: z.union([z.literal('all'), z.array(z.string().min(1))]).default('all'),
    inputSlots: z.union([z.literal('all'), z.array(z.string().min(1))]).default(['base_input']),
    outputSlots: z.union([z.literal('all'), z.array(z.string().min(1))]).default(['base_output']),
    useBootstrap: z.boolean().default(false),
    maxDepth: z.number().int().positive().optional(),
  }),
  'terminal.exec': z.object({
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    cwd: z.string().min(1).optional(),
    env: z.record(z.string(), z.string()).optional(),
    timeoutSeconds: z.number().positive().optional(),
  }),
  'evolver.run': z.object({ goal: z.string().min(1), target: z.string().min(1).optional() }),
  'schedule.fire': z.object({
    coreId: z.string().min(1),
    scheduleId: z.string().min(1),
    dueAt: z.iso.datetime(),
    prompt: z.string().min(1),
  }),
};

export const defaultTaskKinds: KindRegistry = createKindRegistry('task', taskKindInputs);

/** The durable work kinds the host uses, and their payloads. */
export const WorkKind = {
  deliverySend: 'delivery.send',
  scheduleFire: 'schedule.fire',
  taskCompletion: 'task.completion',
} as const;

export const workKindPayloads: Record<string, z.ZodType> = {
  [WorkKind.deliverySend]: z.object({ deliveryId: DeliveryId }),
  [WorkKind.scheduleFire]: z.object({
    coreId: z.string().min(1),
    scheduleId: z.string().min(1),
    dueAt: z.iso.datetime(),
  }),
  [WorkKind.taskCompletion]: z.object({ taskId: TaskId }),
};

export const defaultWorkKinds: KindRegistry = createKindRegistry('work', workKindPayloads);
