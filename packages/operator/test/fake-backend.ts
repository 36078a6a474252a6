import { Subject } from 'rxjs';
import type { OperatorBackend, OperatorEvent } from '../src/index.js';

/** A valid prefixed id (`ses_...`, `run_...`) with a recognizable tail. */
export function fakeId(prefix: string, n = 1): string {
  return `${prefix}_01JD5Y7Q6N${String(n).padStart(16, '0')}`;
}

export const SESSION = fakeId('ses');
export const RUN = fakeId('run');
export const TURN = fakeId('trn');

export type BackendMethod = Exclude<keyof OperatorBackend, 'events$' | 'openSession' | 'handshakeRefused'>;

export interface Call {
  readonly method: BackendMethod;
  readonly params: unknown;
}

/** A manually resolved promise, for holding a backend call open. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * An in-memory backend: records every call, answers with canned results unless a method is overridden,
 * and pushes whatever the test puts on `events`.
 */
export function fakeBackend(overrides: Partial<Record<BackendMethod, (params: never) => Promise<unknown>>> = {}) {
  const calls: Call[] = [];
  const events = new Subject<OperatorEvent>();
  const defaults: Record<BackendMethod, (params: never) => Promise<unknown>> = {
    submit: async () => ({ session_id: SESSION, run_id: RUN, turn_id: TURN }),
    replyPrompt: async () => ({ ok: true }),
    replyApproval: async () => ({ ok: true }),
    interrupt: async () => ({ ok: true }),
    cancel: async () => ({ ok: true }),
    status: async () => ({ sessions: 1, state: 'idle' }),
    history: async () => ({ messages: [] }),
    shutdown: async () => ({ ok: true }),
    compact: async () => ({ session_id: SESSION, compaction_id: 'cmp_1', message_count: 2 }),
  };
  const handler =
    (method: BackendMethod) =>
    (params: never): Promise<unknown> => {
      calls.push({ method, params });
      return (overrides[method] ?? defaults[method])(params);
    };
  const backend = {
    submit: handler('submit'),
    replyPrompt: handler('replyPrompt'),
    replyApproval: handler('replyApproval'),
    interrupt: handler('interrupt'),
    cancel: handler('cancel'),
    status: handler('status'),
    history: handler('history'),
    shutdown: handler('shutdown'),
    compact: handler('compact'),
    events$: events.asObservable(),
  } as OperatorBackend;
  return { backend, calls, events, methodsCalled: () => calls.map((c) => c.method) };
}
