import type { DeliveryAdapter, DeliveryReceipt, OutboundDelivery } from './delivery-adapter.js';
import { RouteSessionMismatchError } from './errors.js';

/** A live binding of one adapter to one session: it carries only that session's messages. */
export interface SessionRoute {
  readonly sessionId: string;
  readonly channel: string;
  /** Whether the adapter can deliver now. */
  isLive(): boolean;
  /** Sends through the adapter; a delivery of another session throws {@link RouteSessionMismatchError}. */
  send(delivery: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt>;
}

/**
 * The session-scoped interaction router (seed 003): live, in-memory bindings of channel adapters (a
 * connected operator client, a configured webhook) to sessions, at most one per (session, channel).
 * Nothing here is durable: after a restart, routes are bound again by whoever owns them.
 *
 * @example
 * const router = new SessionInteractionRouter();
 * const unbind = router.bind(sessionId, createWebhookAdapter({ url }));
 * router.route(sessionId, 'webhook'); // the route; undefined for another channel or session
 * unbind();
 */
export class SessionInteractionRouter {
  private readonly routes = new Map<string, Map<string, BoundRoute>>();

  /**
   * Binds `adapter` as the session's route for `adapter.channel`, replacing an earlier binding of that
   * channel. Returns the unbind function, which removes this binding only (not a later replacement).
   */
  bind(sessionId: string, adapter: DeliveryAdapter): () => void {
    if (sessionId.length === 0) throw new TypeError('bind: sessionId must not be empty');
    const channels = this.routes.get(sessionId) ?? new Map<string, BoundRoute>();
    this.routes.set(sessionId, channels);
    const route = new BoundRoute(sessionId, adapter);
    channels.set(adapter.channel, route);
    return () => {
      const current = this.routes.get(sessionId);
      if (current?.get(adapter.channel) !== route) return;
      current.delete(adapter.channel);
      if (current.size === 0) this.routes.delete(sessionId);
    };
  }

  /** The session's route for `channel`, if one is bound (live or not: see {@link SessionRoute.isLive}). */
  route(sessionId: string, channel: string): SessionRoute | undefined {
    return this.routes.get(sessionId)?.get(channel);
  }

  /** The channels bound for a session, in binding order. */
  channels(sessionId: string): string[] {
    return [...(this.routes.get(sessionId)?.keys() ?? [])];
  }
}

class BoundRoute implements SessionRoute {
  constructor(
    readonly sessionId: string,
    private readonly adapter: DeliveryAdapter,
  ) {}

  get channel(): string {
    return this.adapter.channel;
  }

  isLive(): boolean {
    return this.adapter.isLive?.() ?? true;
  }

  send(delivery: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt> {
    if (delivery.sessionId !== this.sessionId) {
      return Promise.reject(
        new RouteSessionMismatchError(this.channel, this.sessionId, delivery.sessionId, delivery.deliveryId),
      );
    }
    return this.adapter.send(delivery, signal);
  }
}
