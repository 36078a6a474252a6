import { type DeliveryAdapter, SessionInteractionRouter } from '@demiurge/delivery';

/**
 * The host's routes: every session of this home is served by the host's own adapters (the operator adapter,
 * and the webhook when configured), bound on first use — so deliveries of runs recovered after a restart,
 * or queued before a crash, find their route.
 */
export class HostRouter extends SessionInteractionRouter {
  private readonly bound = new Set<string>();

  constructor(private readonly adapters: readonly DeliveryAdapter[]) {
    super();
  }

  ensure(sessionId: string): void {
    if (this.bound.has(sessionId)) return;
    this.bound.add(sessionId);
    for (const adapter of this.adapters) this.bind(sessionId, adapter);
  }

  override route(sessionId: string, channel: string) {
    this.ensure(sessionId);
    return super.route(sessionId, channel);
  }
}
