import { createKindRegistry, type KindRegistry, taskKindInputs } from '@demiurge/control-plane';
import { z } from 'zod';

/**
 * The input of a `terminal.exec` task as this worker reads it: the control plane's fields (`command`, `args`,
 * `cwd`, `env`, `timeoutSeconds`) plus two the worker adds. A superset: every input the control plane's own
 * schema accepts is accepted here (a test keeps them in step).
 *
 * - `shell` (default false): run `command` through `/bin/sh -c`, with `args` as `$1…`; otherwise `command` is
 *   executed directly with `args` and nothing is interpreted by a shell.
 * - `exclusiveScope`: a path (relative to the task's cwd; `.` is the cwd itself) the task writes exclusively.
 *   While it runs, a task whose scope is the same, inside it or around it is refused.
 */
export const TerminalExecInput = z.object({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  cwd: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
  timeoutSeconds: z.number().positive().optional(),
  shell: z.boolean().default(false),
  exclusiveScope: z.string().min(1).optional(),
});
export type TerminalExecInput = z.output<typeof TerminalExecInput>;

/**
 * The control plane's task kinds with {@link TerminalExecInput} for `terminal.exec`. Pass it as
 * `new RuntimeControlPlane({ ..., kinds: workerTaskKinds })`, or `shell` and `exclusiveScope` are stripped
 * from inputs at submit (the default schema does not know them).
 *
 * @example
 * ```ts
 * const controlPlane = new RuntimeControlPlane({ store, clock, ids, work, kinds: workerTaskKinds });
 * await controlPlane.submitTask({ sessionId, kind: 'terminal.exec', title: 'build',
 *   input: { command: 'make', cwd: 'app', exclusiveScope: '.' } });
 * ```
 */
export const workerTaskKinds: KindRegistry = createKindRegistry('task', {
  ...taskKindInputs,
  'terminal.exec': TerminalExecInput,
});
