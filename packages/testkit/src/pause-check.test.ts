import type { RecordedEvent } from '@demiurge/contracts';
import { describe, expect, it } from 'vitest';
import { PausedRunsCheck } from './pause-check.js';

const RUN = 'run_1';
let position = 0;
function event(type: string, streamId: string, actor = 'host-1'): RecordedEvent {
  position++;
  return {
    position,
    eventId: `evt_${position}`,
    streamType: type.split('.')[0] ?? '',
    streamId,
    streamVersion: 1,
    type,
    schemaVersion: 1,
    data: {},
    meta: { actor: { kind: 'system', id: actor }, runId: RUN },
    recordedAt: new Date(0).toISOString(),
  };
}

const feed = (events: RecordedEvent[]) => {
  const check = new PausedRunsCheck();
  return events.flatMap((e) => check.next(e));
};

describe('PausedRunsCheck', () => {
  it('lets the step under way finish once while paused, and anything after a resume', () => {
    expect(
      feed([
        event('run.paused', RUN),
        event('tool_call.succeeded', 'tc_1'),
        event('run.resumed', RUN),
        event('tool_call.started', 'tc_2'),
        event('tool_call.succeeded', 'tc_2'),
        event('turn.model_responded', 'trn_1'),
      ]),
    ).toEqual([]);
  });

  it('a call started while paused is a problem', () => {
    const problems = feed([event('run.paused', RUN), event('tool_call.started', 'tc_1')]);
    expect(problems).toEqual([expect.stringMatching(/run run_1 is paused but started a step: tool_call.started/)]);
  });

  it('a second step while paused is a problem', () => {
    const problems = feed([
      event('run.paused', RUN),
      event('tool_call.succeeded', 'tc_1'),
      event('turn.model_responded', 'trn_1'),
    ]);
    expect(problems).toEqual([expect.stringMatching(/recorded a second step: turn.model_responded/)]);
  });

  it('a step by an owner that claimed the paused run (a restart that ignored the pause) is a problem', () => {
    const problems = feed([
      event('run.paused', RUN),
      event('run.owner_claimed', RUN, 'host-2'),
      event('turn.model_responded', 'trn_1', 'host-2'),
    ]);
    expect(problems).toEqual([expect.stringMatching(/changed owner, but its new owner recorded turn.model_responded/)]);
  });

  it('a cancel ends the pause: settling the calls is allowed', () => {
    expect(
      feed([event('run.paused', RUN), event('run.cancel_requested', RUN), event('tool_call.cancelled', 'tc_1')]),
    ).toEqual([]);
  });
});
