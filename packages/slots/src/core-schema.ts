import { z } from 'zod';

/** A slot id: a plain name, also the slot's folder name (`input/<slot_id>/`). */
export const SLOT_ID_PATTERN = /^[a-z0-9][a-z0-9_]*$/;

export const SlotIdSchema = z
  .string()
  .regex(SLOT_ID_PATTERN, 'a slot id is a plain name: lower-case letters, digits and _, e.g. base_input');

const lane = z.array(SlotIdSchema).default([]);

/** `agent/pipelines.yaml`, the single phase ordering graph (seed 003 Agent Slot Layout). */
export const PipelinesFile = z.strictObject({
  schema_version: z.literal(1),
  bootstrap: z.strictObject({ serial: lane }).default({ serial: [] }),
  input: z.strictObject({ serial: lane, parallel: lane }).default({ serial: [], parallel: [] }),
  output: z.strictObject({ serial: lane, parallel: lane }).default({ serial: [], parallel: [] }),
});
export type PipelinesFile = z.output<typeof PipelinesFile>;

/** `agent/agent.yaml`: who the core is, its model and its system prompt. */
export const AgentFile = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'a core id is lower-case letters, digits, _ and -'),
  name: z.string().min(1),
  description: z.string().default(''),
  provider: z.string().min(1).default('fake'),
  model: z.string().min(1).optional(),
  instructions: z.string().default(''),
  limits: z
    .strictObject({
      step_budget: z.number().int().positive().default(90),
      max_delegation_depth: z.number().int().nonnegative().default(2),
    })
    .default({ step_budget: 90, max_delegation_depth: 2 }),
});
export type AgentFile = z.output<typeof AgentFile>;

/** The extensions a slot module may have: TypeScript (compiled by esbuild, cached) or JavaScript modules. */
export const MODULE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'] as const;

/** `<phase>/<slot_id>/slot.yaml`: one slot's manifest. */
export const SlotFile = z.strictObject({
  entrypoint: z.string().min(1).default('module.ts'),
  description: z.string().default(''),
  timeout_seconds: z.number().positive().max(86_400).default(30),
  failure_policy: z.enum(['soft', 'hard']).default('soft'),
  history_policy: z.enum(['persist', 'model_hidden', 'transient']).default('persist'),
  capabilities: z.array(z.string().min(1)).default([]),
});
export type SlotFile = z.output<typeof SlotFile>;

/** The keys an object at `path` of `schema` accepts, for "unknown key" messages. */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let node: z.ZodType | undefined = schema;
  for (const segment of [...path, undefined]) {
    while (node instanceof z.ZodDefault || node instanceof z.ZodOptional) node = node.unwrap() as z.ZodType;
    if (segment === undefined) break;
    if (node instanceof z.ZodObject) node = node.shape[String(segment)] as z.ZodType | undefined;
    else if (node instanceof z.ZodArray) node = node.element as z.ZodType;
    else if (node instanceof z.ZodRecord) node = node.valueType as z.ZodType;
    else return [];
  }
  return node instanceof z.ZodObject ? Object.keys(node.shape) : [];
}
