import { toolCallEvents } from '@demiurge/contracts';
import { defineLifecycle, type LifecycleEvent, type StateOf } from '../define-lifecycle.js';
import { decisionIs } from '../guards.js';
import { lazySetup } from '../lazy-machine.js';

/** The event types the ToolCall machine handles, e.g. for a typed `NewEvent<ToolCallEventType>`. */
export type ToolCallEventType = (typeof toolCallEvents)[number]['type'];

/**
 * The tool call (effect) lifecycle: requested, then denied by policy or started (intent recorded
 * before the effect), then an outcome; a crash after `started` leaves `unknown`.
 */
export const toolCallMachine = lazySetup({
  types: { events: {} as LifecycleEvent<ToolCallEventType> },
  guards: { decisionIs },
}).createMachine({
  id: 'tool_call',
  initial: 'none',
  states: {
    none: { description: 'No tool call yet.', on: { 'tool_call.requested': 'requested' } },
    requested: {
      description: 'Asked for by the model; policy (plan mode, approvals) decides.',
      on: {
        'tool_call.denied': 'denied',
        'tool_call.started': 'started',
        'tool_call.cancelled': 'cancelled',
      },
    },
    denied: { description: 'Refused by policy, with the reason and how to continue; final.' },
    started: {
      description: 'Dispatched; the effect may be under way.',
      on: {
        'tool_call.process_started': { target: 'started', description: 'its process group was spawned' },
        'tool_call.process_stopped': {
          target: 'started',
          description: 'a host start stopped the group its dead host left',
        },
        'tool_call.succeeded': 'succeeded',
        'tool_call.failed': 'failed',
        'tool_call.cancelled': 'cancelled',
        'tool_call.unknown': 'unknown',
      },
    },
    succeeded: { description: 'Returned a result; final.' },
    failed: { description: 'Raised an error; final.' },
    cancelled: { description: 'Settled as cancelled; final.' },
    unknown: {
      description: 'Started without a recorded outcome; never re-run automatically.',
      on: {
        'tool_call.process_stopped': {
          target: 'unknown',
          description: 'a host start stopped the group its dead host left',
        },
        'tool_call.resolved': [
          {
            target: 'succeeded',
            guard: { type: 'decisionIs', params: { decision: 'succeeded' } },
            description: 'decision is succeeded',
          },
          {
            target: 'failed',
            guard: { type: 'decisionIs', params: { decision: 'failed' } },
            description: 'decision is failed',
          },
        ],
      },
    },
  },
});

/** The states of a ToolCall machine, `none` included. */
export type ToolCallState = StateOf<typeof toolCallMachine>;

/** The tool call lifecycle: {@link toolCallMachine} with its vocabulary, invariants and idempotent repeats. */
export const toolCallLifecycle = defineLifecycle({
  aggregate: 'tool call',
  streamType: 'tool_call',
  title: 'Tool call (effect)',
  summary:
    'One tool call inside a turn, keyed by turn and model-loop step. Its intent is recorded before the effect and its outcome after.',
  invariants: [
    'A denial is a recorded outcome that explains the policy; the tool is never pretended not to exist.',
    'A started call left without an outcome becomes unknown and is never executed again automatically (no double execution of a non-idempotent effect); only tool_call.resolved settles it.',
    'Cancellation settles a requested or started call as cancelled.',
  ],
  machine: toolCallMachine,
  vocabulary: toolCallEvents,
  idempotent: [{ event: 'tool_call.cancelled' }, { event: 'tool_call.resolved' }],
});
