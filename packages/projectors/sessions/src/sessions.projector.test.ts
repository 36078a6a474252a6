import { createIdGenerator, type IdGenerator, IdPrefix, type NewEvent } from '@demiurge/contracts';
import { createFakeClock, createSeededIdGenerator, propertySettings } from '@demiurge/contracts/testing';
import { createInMemoryEventStore, type EventStore } from '@demiurge/event-store';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type SessionView, sessionsProjector, type TranscriptEntry, type TurnView } from './index.js';

function setup() {
  const clock = createFakeClock();
  const ids = createSeededIdGenerator(clock, 3);
  const store = createInMemoryEventStore({ projectors: [sessionsProjector], clock, ids });
  return { store, ids, clock };
}

const session = (
  store: EventStore,
  sessionId: string,
  events: NewEvent[],
  expectedVersion: number | 'no_stream' | 'any' = 'any',
) => store.append({ streamType: 'session', streamId: sessionId, expectedVersion, events });

describe('sessions projector', () => {
  it('projects a session, its transcript by visibility, turns and binding', async () => {
    const { store, ids, clock } = setup();
    const sessionId = ids.next(IdPrefix.session);
    const turnId = ids.next(IdPrefix.turn);
    const binding = { coreId: 'default', channel: 'cli', conversationKey: 'tty1' };
    await session(
      store,
      sessionId,
      [{ type: 'session.created', data: { sessionId, title: 'Plans', coreId: 'default', binding } }],
      'no_stream',
    );
    clock.advance(1000);
    await session(store, sessionId, [
      { type: 'turn.started', data: { turnId, sessionId } },
      {
        type: 'message.recorded',
        data: { messageId: ids.next('msg'), sessionId, turnId, role: 'user', text: 'hello', visibility: 'persist' },
      },
      {
        type: 'message.recorded',
        data: {
          messageId: ids.next('msg'),
          sessionId,
          turnId,
          role: 'system',
          text: 'typing…',
          visibility: 'transient',
        },
      },
      {
        type: 'message.recorded',
        data: {
          messageId: ids.next('msg'),
          sessionId,
          turnId,
          role: 'assistant',
          text: 'hi there',
          visibility: 'model_hidden',
        },
      },
    ]);
    const reader = store.projection('sessions');
    expect(await reader.get<SessionView>('sessions', sessionId)).toMatchObject({
      turnCount: 1,
      messageCount: 3,
      activeTurnId: turnId,
      lastMessage: { role: 'assistant', text: 'hi there' },
    });
    await session(store, sessionId, [
      { type: 'turn.completed', data: { turnId, sessionId } },
      { type: 'session.archived', data: { sessionId, reason: 'done' } },
    ]);
    expect(await reader.get<SessionView>('sessions', sessionId)).toMatchObject({
      status: 'archived',
      archivedReason: 'done',
      activeTurnId: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:01.000Z',
    });
    const transcript = await reader.list<TranscriptEntry>('messages', { prefix: `${sessionId}/` });
    expect(transcript.map((m) => [m.role, m.visibility])).toEqual([
      ['user', 'persist'],
      ['assistant', 'model_hidden'],
    ]);
    expect(await reader.list<TurnView>('turns')).toMatchObject([
      { turnId, status: 'completed', endedAt: '2026-01-01T00:00:01.000Z' },
    ]);
    expect(await reader.get('bindings', 'default/cli/tty1')).toBe(sessionId);
  });

  it('rebuilds to the live state after any sequence of session events', async () => {
    const action = fc.record({
      session: fc.integer({ min: 0, max: 2 }),
      kind: fc.constantFrom('message', 'turn', 'end', 'fail', 'rename', 'archive'),
      text: fc.string({ maxLength: 200 }),
      visibility: fc.constantFrom('persist', 'model_hidden', 'transient'),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(action, { maxLength: 40 }), async (actions) => {
        const clock = createFakeClock();
        const ids: IdGenerator = createIdGenerator(clock);
        const store = createInMemoryEventStore({ projectors: [sessionsProjector], clock, ids });
        const sessions = [0, 1, 2].map(() => ids.next(IdPrefix.session));
        const turns: (string | undefined)[] = [];
        for (const sessionId of sessions)
          await session(store, sessionId, [{ type: 'session.created', data: { sessionId, title: 't', coreId: 'c' } }]);
        for (const a of actions) {
          clock.advance(10);
          const sessionId = sessions[a.session]!;
          if (a.kind === 'turn') turns[a.session] = ids.next('trn');
          const turnId = turns[a.session];
          const event: NewEvent | undefined =
            a.kind === 'message'
              ? {
                  type: 'message.recorded',
                  data: { messageId: ids.next('msg'), sessionId, role: 'user', text: a.text, visibility: a.visibility },
                }
              : a.kind === 'turn'
                ? { type: 'turn.started', data: { turnId: turnId!, sessionId } }
                : a.kind === 'end' && turnId
                  ? { type: 'turn.completed', data: { turnId, sessionId } }
                  : a.kind === 'fail' && turnId
                    ? { type: 'turn.failed', data: { turnId, sessionId, error: { code: 'x', message: 'broke' } } }
                    : a.kind === 'rename' && a.text
                      ? { type: 'session.updated', data: { sessionId, title: a.text } }
                      : a.kind === 'archive'
                        ? { type: 'session.archived', data: { sessionId, reason: 'r' } }
                        : undefined;
          if (event) await session(store, sessionId, [event]);
        }
        const live = await store.projection('sessions').dump();
        const messages = (await store.readAll({ types: ['message.recorded'] })).length;
        const views = Object.values(live.sessions ?? {}) as SessionView[];
        expect(views.reduce((n, s) => n + s.messageCount, 0)).toBe(messages);
        await store.rebuild();
        expect(await store.projection('sessions').dump()).toEqual(live);
      }),
      propertySettings(100),
    );
  });
});
