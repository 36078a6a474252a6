import type { NewEvent } from '@demiurge/contracts';
import { IllegalTransitionError } from '@demiurge/lifecycle';
import { deciderSpecification } from '@demiurge/lifecycle/testing';
import { describe, it } from 'vitest';
import { sessionDecider } from '../src/index.js';

const sessionId = 'ses_01JD5Y7Q6N0000000000000000';
const spec = deciderSpecification(sessionDecider, { streamType: 'session' });
const created: NewEvent = { type: 'session.created', data: { sessionId, title: 't', coreId: 'default' } };
const toPlan: NewEvent = { type: 'session.mode_changed', data: { sessionId, mode: 'plan', previous: 'default' } };
const archived: NewEvent = { type: 'session.archived', data: { sessionId, reason: 'done' } };
const message: NewEvent<'message.recorded'> = {
  type: 'message.recorded',
  data: { messageId: 'msg_1', sessionId, role: 'user', text: 'hi', visibility: 'persist' },
};

describe('the session decider (given / when / then)', () => {
  it('opens a session, in plan mode when asked, in one decision', () => {
    spec
      .given([])
      .when({ type: 'open', sessionId, title: 't', coreId: 'default', mode: 'plan' })
      .thenAppends([created, toPlan]);
  });

  it("admits an input: the mode switch where it differs, then the messages; opening with it when it's new", () => {
    spec
      .given([created])
      .when({ type: 'admit', sessionId, mode: 'plan', messages: [message] })
      .thenAppends([toPlan, message]);
    spec
      .given([created, toPlan])
      .when({ type: 'admit', sessionId, mode: 'plan', messages: [message] })
      .thenAppends([message]);
    spec
      .given([])
      .when({ type: 'admit', sessionId, open: { title: 't', coreId: 'default' }, mode: 'plan', messages: [message] })
      .thenAppends([created, toPlan, message]);
  });

  it('repeats are no-ops: the current mode or busy mode, archiving again', () => {
    spec.given([created, toPlan]).when({ type: 'set_mode', sessionId, mode: 'plan' }).thenNothing();
    spec.given([created]).when({ type: 'set_busy_mode', sessionId, busyMode: 'queue' }).thenNothing();
    spec.given([created, archived]).when({ type: 'archive', sessionId, reason: 'again' }).thenNothing();
  });

  it('refuses what the machine refuses: an archived session takes no input; a session opens once', () => {
    spec
      .given([created, archived])
      .when({ type: 'admit', sessionId, messages: [message] })
      .thenThrows(IllegalTransitionError);
    spec
      .given([created])
      .when({ type: 'open', sessionId, title: 't', coreId: 'default' })
      .thenThrows(IllegalTransitionError);
    spec.given([]).when({ type: 'rename', sessionId, title: 'x' }).thenThrows(IllegalTransitionError);
  });
});
