import { basename } from 'node:path';
import { type IdGenerator, IdPrefix, type MessageVisibility } from '@demiurge/contracts';
import type { HostWorkLifecycleRuntime } from '@demiurge/control-plane';
import { type EventStore, StreamVersionConflictError } from '@demiurge/event-store';
import type { SessionRuntime } from '@demiurge/sessions';
import type { SendResult } from './slot-sdk.js';

/** A message a slot sends, to be recorded with its delivery intent at once. */
export interface DeliveryIntent {
  readonly sessionId: string;
  readonly turnId?: string;
  readonly coreId: string;
  readonly slotId: string;
  readonly slotRunId: string;
  /** The message text (for a file: its caption, or `[file: <name>]`). */
  readonly text: string;
  /** For `send_file`: the file's real path and caption. */
  readonly file?: { readonly path: string; readonly caption?: string };
  /** The sending slot's history policy. */
  readonly visibility: MessageVisibility;
}

/** Records a {@link DeliveryIntent}; the host wires it (default {@link createDeliveryIntents}). */
export type DeliverFn = (intent: DeliveryIntent) => Promise<SendResult>;

export interface DeliveryIntentsOptions {
  readonly store: EventStore;
  readonly ids: IdGenerator;
  readonly host: HostWorkLifecycleRuntime;
  readonly sessions: SessionRuntime;
  /** The channel of a session without a channel binding. Default `operator`. */
  readonly defaultChannel?: string;
  /** Attempts when another writer moves the session stream in between. Default 8. */
  readonly tries?: number;
  /**
   * Where a session's sends go, when the host decides it rather than the session's binding: a channel (and
   * conversation key) to queue the delivery for, `null` to record the message only and send nothing, or
   * `undefined` for the default (the binding, else `defaultChannel`).
   */
  readonly routeOf?: (sessionId: string) => Promise<SessionDeliveryRoute | null | undefined>;
}

/** A channel (and conversation key) a session's sends are queued for. */
export interface SessionDeliveryRoute {
  readonly channel: string;
  readonly conversationKey?: string;
}

/**
 * The default {@link DeliverFn}: one atomic append of `message.recorded` (an assistant message on the
 * session stream, checked by the session machine), `delivery.queued` and its `work.enqueued`
 * (`HostWorkLifecycleRuntime.enqueueDelivery` with the message as its `also` stream). The channel is the
 * session's binding, else `defaultChannel`. A file's real path is kept in the message's meta (`attachment`).
 * When another writer appends to the session in between, the append is retried from a fresh read.
 *
 * @example
 * ```ts
 * const deliver = createDeliveryIntents({ store, ids, host, sessions });
 * const slots = new SlotRuntime({ store, clock, ids, core, deliver, background });
 * ```
 */
export function createDeliveryIntents(options: DeliveryIntentsOptions): DeliverFn {
  const { sessions, host } = options;
  const tries = options.tries ?? 8;
  return async (intent) => {
    const messageId = options.ids.next(IdPrefix.message);
    const message = sessions.messageEvent({
      sessionId: intent.sessionId,
      role: 'assistant',
      text: intent.text,
      visibility: intent.visibility,
      messageId,
      ...(intent.turnId ? { turnId: intent.turnId } : {}),
    });
    const event = {
      ...message,
      meta: {
        actor: { kind: 'agent' as const, id: `${intent.coreId}/${intent.slotId}` },
        sessionId: intent.sessionId,
        ...(intent.turnId ? { turnId: intent.turnId } : {}),
        slotRunId: intent.slotRunId,
        ...(intent.file
          ? { attachment: { kind: 'file', path: intent.file.path, name: basename(intent.file.path) } }
          : {}),
      },
    };
    const route = await options.routeOf?.(intent.sessionId);
    for (let attempt = 1; ; attempt++) {
      const session = await sessions.get(intent.sessionId);
      const stream = await sessions.sessionStream(intent.sessionId, [event]);
      try {
        if (route === null) {
          await options.store.append([stream]); // recorded in the session only: no route, nothing to send
          return { messageId, deliveryId: null };
        }
        const target: SessionDeliveryRoute = route ?? {
          channel: session.binding?.channel ?? options.defaultChannel ?? 'operator',
          ...(session.binding ? { conversationKey: session.binding.conversationKey } : {}),
        };
        const { deliveryId } = await host.enqueueDelivery(
          {
            sessionId: intent.sessionId,
            messageId,
            channel: target.channel,
            ...(target.conversationKey ? { conversationKey: target.conversationKey } : {}),
          },
          [stream],
        );
        return { messageId, deliveryId };
      } catch (err) {
        if (!(err instanceof StreamVersionConflictError) || err.streamId !== intent.sessionId || attempt >= tries) {
          throw err;
        }
      }
    }
  };
}

/** The message text of a file send: its caption, else `[file: <name>]`. */
export function fileMessageText(path: string, caption: string | undefined): string {
  return caption ?? `[file: ${basename(path)}]`;
}
