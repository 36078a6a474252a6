import { join } from 'node:path';
import { createIdGenerator, IdPrefix, systemClock } from '@demiurge/contracts';
import type { AppendStream } from '@demiurge/event-store';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import { hostProjectors } from '@demiurge/host';

/** Turns per seeded session: a session is 1 + 4 × TURNS events. */
const TURNS = 25;
const EVENTS_PER_SESSION = 1 + 4 * TURNS;
const IN_FLIGHT = 8;

/**
 * Fills the store of an initialised home (`demiurge init`, no host serving it) with about `events` real
 * events through the store API and the host's projectors, so its read models are current: sessions of 25
 * completed turns each (turn started, user message, assistant message, turn completed), one append per
 * session, 8 appends in flight. Returns the number of events written.
 */
export async function seedHome(home: string, events: number): Promise<number> {
  const store = await openSqliteEventStore({
    path: join(home, 'runtime', 'runtime.sqlite3'),
    projectors: hostProjectors,
    synchronous: 'NORMAL',
  });
  const ids = createIdGenerator(systemClock);
  const sessions = Math.max(1, Math.round(events / EVENTS_PER_SESSION));
  let written = 0;
  try {
    const one = async (n: number) => {
      const sessionId = ids.next(IdPrefix.session);
      const stream: AppendStream = {
        streamType: 'session',
        streamId: sessionId,
        expectedVersion: 'no_stream',
        events: [
          {
            type: 'session.created',
            data: {
              sessionId,
              title: `bench session ${n}`,
              coreId: 'default',
              binding: { coreId: 'default', channel: 'cli', conversationKey: `bench-${n}` },
            },
          },
          ...Array.from({ length: TURNS }, (_, t) => turnEvents(ids, sessionId, t)).flat(),
        ],
      };
      const appended = await store.append(stream, { meta: { actor: { kind: 'user', id: 'bench' }, sessionId } });
      written += appended.events.length;
    };
    for (let next = 0; next < sessions; next += IN_FLIGHT) {
      await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, sessions - next) }, (_, i) => one(next + i)));
    }
  } finally {
    await store.close();
  }
  return written;
}

function turnEvents(ids: ReturnType<typeof createIdGenerator>, sessionId: string, t: number): AppendStream['events'] {
  const turnId = ids.next(IdPrefix.turn);
  const inputId = ids.next(IdPrefix.message);
  const outputId = ids.next(IdPrefix.message);
  const question = `question ${t}: what is next on the list?`;
  const answer = `answer ${t}: the next item, with a sentence or two of detail about it.`;
  return [
    { type: 'turn.started', data: { turnId, sessionId, inputMessageId: inputId } },
    {
      type: 'message.recorded',
      data: { messageId: inputId, sessionId, turnId, role: 'user', text: question, visibility: 'persist' },
    },
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
  ];
}
