import { type Actor, type IdGenerator, IdPrefix, type SessionId } from '@demiurge/contracts';
import type { AppendStream, EventStore } from '@demiurge/event-store';

const user: Actor = { kind: 'user', id: 'demo-user' };
const agent: Actor = { kind: 'agent', id: 'default' };

/**
 * Appends a small sample session through the store API: the session, then two turns, each a user
 * message and the assistant's answer, one atomic append per step as the runtime would make them.
 */
export async function appendSampleSession(store: EventStore, ids: IdGenerator): Promise<SessionId> {
  const sessionId = ids.next(IdPrefix.session) as SessionId;
  const stream = (expectedVersion: number | 'no_stream', events: AppendStream['events']): AppendStream => ({
    streamType: 'session',
    streamId: sessionId,
    expectedVersion,
    events,
  });
  let version = (
    await store.append(
      stream('no_stream', [
        {
          type: 'session.created',
          data: {
            sessionId,
            title: 'Demo: planning a trip',
            coreId: 'default',
            binding: { coreId: 'default', channel: 'cli', conversationKey: `demo-${sessionId}` },
          },
        },
      ]),
      { meta: { actor: user, sessionId } },
    )
  ).events.length;
  const exchanges = [
    ['Plan a two-day trip to Lisbon.', 'Day 1: Alfama and the castle. Day 2: Belém and the riverside.'],
    ['Add a budget.', 'About 180 EUR: 90 for food, 60 for transport and tickets, 30 spare.'],
  ] as const;
  for (const [question, answer] of exchanges) {
    const turnId = ids.next(IdPrefix.turn);
    const inputId = ids.next(IdPrefix.message);
    const outputId = ids.next(IdPrefix.message);
    const started = await store.append(
      stream(version, [
        { type: 'turn.started', data: { turnId, sessionId, inputMessageId: inputId } },
        {
          type: 'message.recorded',
          data: { messageId: inputId, sessionId, turnId, role: 'user', text: question, visibility: 'persist' },
        },
      ]),
      { meta: { actor: user, sessionId, turnId, correlationId: turnId } },
    );
    version += started.events.length;
    const done = await store.append(
      stream(version, [
        {
          type: 'message.recorded',
          data: { messageId: outputId, sessionId, turnId, role: 'assistant', text: answer, visibility: 'persist' },
        },
        {
          type: 'turn.completed',
          data: {
            turnId,
            sessionId,
            outputMessageId: outputId,
            usage: { inputTokens: question.length, outputTokens: answer.length },
          },
        },
      ]),
      { meta: { actor: agent, sessionId, turnId, correlationId: turnId, causationId: started.events[1]!.eventId } },
    );
    version += done.events.length;
  }
  return sessionId;
}
