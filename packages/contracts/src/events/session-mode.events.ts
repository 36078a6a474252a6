import { z } from 'zod';
import { SessionId } from '../ids.js';
import { defineEvent } from '../registry.js';

/** A session's execution policy: `plan` blocks mutating actions unless approved; `default` does not. */
export const SessionMode = z.enum(['plan', 'default']);
export type SessionMode = z.infer<typeof SessionMode>;

export const SessionModeChanged = defineEvent({
  type: 'session.mode_changed',
  schemaVersion: 1,
  description: "A session's policy overlay changed between plan mode and default mode.",
  data: () => z.object({ sessionId: SessionId, mode: SessionMode, previous: SessionMode }),
});

/** What a second input does while a turn runs: wait its turn (`queue`) or cancel the running one (`interrupt`). */
export const BusyMode = z.enum(['queue', 'interrupt']);
export type BusyMode = z.infer<typeof BusyMode>;

export const SessionBusyModeChanged = defineEvent({
  type: 'session.busy_mode_changed',
  schemaVersion: 1,
  description: 'What a new input does while a turn is running in the session: queue behind it or interrupt it.',
  data: () => z.object({ sessionId: SessionId, busyMode: BusyMode }),
});

export const sessionModeEvents = [SessionModeChanged, SessionBusyModeChanged] as const;
