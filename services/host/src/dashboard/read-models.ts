import type { RecordedEvent } from '@demiurge/contracts';
import { HistoryParams, type OperatorBackend } from '@demiurge/operator';
import { outboxReader } from '@demiurge/projector-outbox';
import { runsReader } from '@demiurge/projector-runs';
import { sessionsReader } from '@demiurge/projector-sessions';
import { taskBoardReader } from '@demiurge/projector-task-board';
import { workItemsReader } from '@demiurge/projector-work-items';
import type { DemiurgeApp } from '../app.js';
import type { HostStatusResult } from '../gateway.js';

/** How many events `/api/events` returns at most per request. */
export const EVENTS_PAGE = 200;

/**
 * The dashboard's reads: the gateway's operator status and history, and the projector packages' typed
 * readers. Nothing here folds events itself.
 */
export function dashboardReads(app: DemiurgeApp, backend: OperatorBackend) {
  const { store } = app;
  return {
    head: () => store.head(),
    status: async () => ({ ...((await backend.status({})) as HostStatusResult), head: await store.head() }),
    sessions: () => sessionsReader(store).all(),
    async session(sessionId: string) {
      const { session_id: _, ...history } = await backend.history(HistoryParams.parse({ session_id: sessionId }));
      const session = await app.runtime.sessions.get(sessionId);
      const turns = await sessionsReader(store).turns(sessionId);
      const reader = runsReader(store);
      const runs = await reader.ofSession(sessionId);
      const toolCalls = [];
      for (const turn of turns) {
        for (const id of await reader.toolCallIdsOfTurn(turn.turnId)) {
          const call = await reader.toolCall(id);
          if (call) toolCalls.push(call);
        }
      }
      return { session, turns, runs, toolCalls, ...history };
    },
    runs: () => runsReader(store).all(),
    tasks: async (all = false) => (await taskBoardReader(store).all()).filter((t) => all || !t.hidden),
    async work() {
      const work = await workItemsReader(store).all();
      const outbox = [];
      const reader = outboxReader(store);
      for (const s of await sessionsReader(store).all()) outbox.push(...(await reader.ofSession(s.sessionId)));
      return { work, outbox };
    },
    async events(from: number, type?: string): Promise<{ events: RecordedEvent[]; head: number; next: number }> {
      const head = await store.head();
      const page = await store.readAll({ from, limit: EVENTS_PAGE });
      const events = type ? page.filter((e) => e.type.startsWith(type)) : page;
      const last = page.at(-1);
      return { events, head, next: last ? last.position + 1 : from };
    },
  };
}

export type DashboardReads = ReturnType<typeof dashboardReads>;
