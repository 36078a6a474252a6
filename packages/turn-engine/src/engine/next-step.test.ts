import type { RunState, ToolCallState, TurnState } from '@demiurge/lifecycle';
import { describe, expect, it } from 'vitest';
import type { StepRecord, ToolCallRecord, TurnRecord } from '../turn-state.js';
import { type NextStep, nextStep } from './next-step.js';

const call = (id: string, state: ToolCallState): ToolCallRecord => ({
  streamId: id,
  state,
  version: 1,
  events: [],
  callId: `c_${id}`,
  name: 'shell',
  arguments: {},
  argumentsError: null,
  idempotent: false,
  output: null,
  error: null,
  denial: null,
  reason: null,
  resolution: null,
});

const step = (n: number, calls: ToolCallRecord[], content = `round ${n}`): StepRecord => ({
  stepId: `s${n}`,
  content,
  calls,
  usage: { inputTokens: 1, outputTokens: 1 },
});

const turn = (state: TurnState, steps: StepRecord[] = []): TurnRecord => ({
  streamId: 'trn_1',
  state,
  version: 1 + steps.length,
  events: [],
  turnId: 'trn_1',
  sessionId: 'ses_1',
  runId: 'run_1',
  inputMessageId: 'msg_1',
  context: [],
  selection: null,
  core: null,
  workspace: null,
  error: null,
  steps,
});

const run = (state: RunState, reason: string | null = null) => ({ state, reason });

const done = call('tc_done', 'succeeded');
const requested = call('tc_req', 'requested');
const started = call('tc_started', 'started');

describe('nextStep: the turn state decides the next step', () => {
  const table: [string, Parameters<typeof nextStep>[0], NextStep][] = [
    [
      'a new turn asks the model',
      { run: run('running'), turn: turn('running'), stepBudget: 3 },
      { kind: 'model_round', stepId: 's1' },
    ],
    [
      'every call of the last round settled: the next round',
      { run: run('running'), turn: turn('running', [step(1, [done])]), stepBudget: 3 },
      { kind: 'model_round', stepId: 's2' },
    ],
    [
      'the first pending call of the last round is dispatched',
      {
        run: run('running'),
        turn: turn('running', [step(1, [done, requested, call('tc_2', 'requested')])]),
        stepBudget: 3,
      },
      { kind: 'dispatch', stepId: 's1', call: requested },
    ],
    [
      'a call started by a gone owner becomes unknown, never re-run',
      { run: run('running'), turn: turn('running', [step(1, [started, requested])]), stepBudget: 3 },
      { kind: 'record_unknown', stepId: 's1', call: started },
    ],
    [
      'a round without tool calls is the answer (a recorded one is finalized)',
      { run: run('running'), turn: turn('running', [step(1, [done]), step(2, [], 'the answer')]), stepBudget: 3 },
      { kind: 'finish', text: 'the answer' },
    ],
    [
      'the budget used up without an answer',
      { run: run('running'), turn: turn('running', [step(1, [done]), step(2, [done])]), stepBudget: 2 },
      { kind: 'budget_exhausted' },
    ],
    [
      'an answer in the last round of the budget still finishes',
      { run: run('running'), turn: turn('running', [step(1, [done]), step(2, [])]), stepBudget: 2 },
      { kind: 'finish', text: 'round 2' },
    ],
    [
      'a cancelling run settles with its reason, pending calls or not',
      { run: run('cancelling', 'user pressed stop'), turn: turn('running', [step(1, [requested])]), stepBudget: 3 },
      { kind: 'settle_cancel', reason: 'user pressed stop' },
    ],
    [
      'a cancel without a reason',
      { run: run('cancelling'), turn: turn('running'), stepBudget: 3 },
      { kind: 'settle_cancel', reason: 'cancelled' },
    ],
    [
      'a paused run waits at the step boundary, before a pending call',
      { run: run('paused', 'hold'), turn: turn('running', [step(1, [requested])]), stepBudget: 3 },
      { kind: 'pause_wait' },
    ],
    [
      'a waiting run with a requested call waits on its approval',
      { run: run('waiting', 'approval'), turn: turn('running', [step(1, [requested])]), stepBudget: 3 },
      { kind: 'await_approval', stepId: 's1', call: requested },
    ],
    [
      'a waiting run with nothing pending stops the drive, resumable',
      { run: run('waiting'), turn: turn('running', [step(1, [done])]), stepBudget: 3 },
      { kind: 'stop_waiting' },
    ],
    [
      'a blocked run stops the drive',
      { run: run('blocked'), turn: turn('running', [step(1, [requested])]), stepBudget: 3 },
      { kind: 'stop_waiting' },
    ],
    [
      'a completed turn has ended (whatever the run says)',
      { run: run('cancelling'), turn: turn('completed', [step(1, [])]), stepBudget: 3 },
      { kind: 'ended', status: 'completed' },
    ],
    [
      'a failed turn has ended',
      { run: run('failed'), turn: turn('failed'), stepBudget: 3 },
      { kind: 'ended', status: 'failed' },
    ],
    [
      'a cancelled turn has ended',
      { run: run('cancelled'), turn: turn('cancelled'), stepBudget: 3 },
      { kind: 'ended', status: 'cancelled' },
    ],
  ];
  it.each(table)('%s', (_name, view, expected) => {
    expect(nextStep(view)).toEqual(expected);
  });
});
