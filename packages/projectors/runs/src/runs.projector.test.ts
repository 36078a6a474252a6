import { approvalEvents, runEvents, toolCallEvents } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { runsProjector } from './index.js';

describe('runs projector', () => {
  it('is named runs (version 1) and handles every run, tool-call and approval event and the four turn events', () => {
    expect([runsProjector.name, runsProjector.version]).toEqual(['runs', 1]);
    const handled = new Set(runsProjector.handles);
    for (const e of [...runEvents, ...toolCallEvents, ...approvalEvents]) expect(handled).toContain(e.type);
    expect(runsProjector.handles.filter((t) => t.startsWith('turn.')).sort()).toEqual([
      'turn.cancelled',
      'turn.completed',
      'turn.failed',
      'turn.started',
    ]);
    expect(handled.size).toBe(runEvents.length + toolCallEvents.length + approvalEvents.length + 4);
  });
});
