import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fuzzSettings } from '@demiurge/contracts/testing';
import { RunsCollections, runsProjector, type ToolCallView } from '@demiurge/projector-runs';
import { createFakeProvider, type FakeStep, type ModelProvider } from '@demiurge/providers';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from './harness.js';

/**
 * Tool arguments fuzzed through the engine's dispatch path: a scripted model asks for the built-in tools with
 * arguments from each tool's input shape, mutated (a field dropped, of the wrong type, unknown, huge, a path
 * out of the workspace). Every call must end recorded (succeeded, or failed with a message naming the tool and
 * the field), the turn must complete, every stream must pass its machine, and nothing outside the workspace
 * may change.
 */
const odd = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(-1, 0, 1e308, 0.5),
  fc.constantFrom(
    '',
    '../outside.txt',
    '/etc/passwd',
    '..',
    'a\u0000b',
    'x'.repeat(5000),
    '~/x',
    'sub/../../outside.txt',
  ),
  fc.constant([]),
  fc.constant({}),
  fc.constant({ path: 'nested' }),
);
const path = fc.constantFrom('a.txt', 'dir/b.txt', '.', 'dir', 'missing.txt', '../outside.txt', '/tmp');
const validArgs: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  read_file: fc.record({ path }),
  list_dir: fc.record({ path }, { requiredKeys: [] }),
  write_file: fc.record({ path, content: fc.string({ maxLength: 20 }) }),
  edit_file: fc.record({ path, old_text: fc.constantFrom('hello', 'x'), new_text: fc.string({ maxLength: 10 }) }),
  shell: fc.record(
    {
      command: fc.constantFrom('true', 'echo hi', 'exit 3'),
      cwd: fc.constantFrom('.', 'dir', '..'),
      timeout_seconds: fc.constantFrom(5, 0, -1, 1e9),
    },
    { requiredKeys: ['command'] },
  ),
  task_list: fc.constant({}),
  task_status: fc.record({ task_id: fc.constantFrom('tsk_01JD5Y7Q6N0000000000000001', 'nope') }),
  task_control: fc.record({
    task_id: fc.constantFrom('tsk_01JD5Y7Q6N0000000000000001'),
    command: fc.constantFrom('cancel', 'explode'),
  }),
  yield_until: fc.record({
    task_id: fc.constant('tsk_01JD5Y7Q6N0000000000000001'),
    timeout_seconds: fc.constantFrom(0, 0.01, -5),
  }),
};
const mutate = (args: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> => {
  const keys = Object.keys(args);
  const options: fc.Arbitrary<Record<string, unknown>>[] = [
    fc.constant(args),
    fc.tuple(fc.constantFrom('extra', 'Path', 'constructor', '__proto__'), odd).map(([k, v]) => ({ ...args, [k]: v })),
  ];
  if (keys.length > 0) {
    options.push(fc.tuple(fc.constantFrom(...keys), odd).map(([k, v]) => ({ ...args, [k]: v })));
    options.push(
      fc.constantFrom(...keys).map((k) => Object.fromEntries(Object.entries(args).filter(([key]) => key !== k))),
    );
  }
  return fc.oneof(...options);
};
const toolCall = fc
  .constantFrom(...Object.keys(validArgs))
  .chain((name) => validArgs[name]!.chain(mutate).map((args) => ({ name, arguments: args })));

/** Every file and directory of the workspace with its content: what a refused call must not change. */
function workspaceState(root: string, dir = ''): string[] {
  return readdirSync(join(root, dir))
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(join(root, path)).isDirectory()) return [`${path}/`, ...workspaceState(root, path)];
      return [`${path}=${readFileSync(join(root, path), 'utf8')}`];
    });
}

let h: Harness;
let script: FakeStep[] = [];
/** The model of the current run: the fake provider playing `script`, swapped per run. */
const provider: ModelProvider = {
  name: 'fake',
  model: 'fake-1',
  complete: (request) => createFakeProvider({ script }).complete(request),
};
beforeAll(async () => {
  h = await openHarness({ provider });
  writeFileSync(join(h.dir, 'outside.txt'), 'untouched');
});
afterAll(() => h.close());

describe('tool arguments fuzz (through the engine dispatch)', () => {
  it('records every call with a clear outcome, completes the turn and never leaves the workspace', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(toolCall, { minLength: 1, maxLength: 3 }), async (calls) => {
        script = [{ tool_calls: calls as never }, { content: 'done' }];
        const { sessionId } = await h.sessions.create({ title: `fuzz ${n++}`, coreId: 'default' });
        const workspaceBefore = workspaceState(h.workspace);
        const outcome = await h.engine.runTurn({ sessionId, text: 'use the tools' });
        expect(outcome.status).toBe('completed');
        const views = (
          await h.store.projection(runsProjector.name).list<ToolCallView>(RunsCollections.toolCalls)
        ).filter((c) => c.turnId === outcome.turnId);
        expect(views).toHaveLength(calls.length);
        for (const view of views) {
          expect(['succeeded', 'failed']).toContain(view.status);
          if (view.status !== 'failed') continue;
          const message = view.error?.message ?? '';
          expect(message).not.toMatch(/\[object |unexpected error|\n\s+at /i);
          expect(message.length).toBeLessThan(6000);
          if (/^invalid /.test(message)) expect(message).toMatch(new RegExp(`^invalid ${view.tool} arguments`));
        }
        // Refused arguments are recorded as a failed call for the model to read; the tool itself never ran.
        const refusedAll = views.every((v) => v.status === 'failed' && /^invalid /.test(v.error?.message ?? ''));
        if (refusedAll) expect(workspaceState(h.workspace)).toEqual(workspaceBefore);
        expect(readFileSync(join(h.dir, 'outside.txt'), 'utf8')).toBe('untouched');
        expect(readdirSync(h.dir).sort()).toEqual(expect.arrayContaining(['outside.txt', 'workspace']));
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      fuzzSettings('tool arguments', 40),
    );
    expect(await h.verify()).toEqual([]);
  });
});
