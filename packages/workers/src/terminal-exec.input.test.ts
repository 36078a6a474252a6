import { taskKindInputs } from '@demiurge/control-plane';
import { describe, expect, it } from 'vitest';
import { TerminalExecInput, workerTaskKinds } from './terminal-exec.input.js';

describe('TerminalExecInput', () => {
  it('is a superset of the control plane schema: same fields and defaults, plus shell and exclusiveScope', () => {
    const base = taskKindInputs['terminal.exec'];
    const inputs = [{ command: 'ls' }, { command: 'ls', args: ['-l'], cwd: 'sub', env: { A: '1' }, timeoutSeconds: 2 }];
    for (const input of inputs) {
      expect(TerminalExecInput.parse(input)).toEqual({ ...(base.parse(input) as object), shell: false });
    }
    for (const bad of [{}, { command: '' }, { command: 'ls', timeoutSeconds: 0 }, { command: 'ls', args: [1] }]) {
      expect(TerminalExecInput.safeParse(bad).success).toBe(base.safeParse(bad).success);
    }
    expect(workerTaskKinds.schema('terminal.exec').parse({ command: 'x', shell: true, exclusiveScope: '.' })).toEqual({
      command: 'x',
      args: [],
      shell: true,
      exclusiveScope: '.',
    });
    expect(workerTaskKinds.kinds).toEqual(Object.keys(taskKindInputs));
  });
});
