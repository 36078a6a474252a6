import { type Actor, type Clock, type EventMeta, type IdGenerator, IdPrefix } from '@demiurge/contracts';
import { NotFoundError } from '@demiurge/control-plane';
import { type AppendStream, commandLoop, type EventStore, loadAggregate, streamAppend } from '@demiurge/event-store';
import { approvalFold } from '@demiurge/lifecycle';
import { type ApprovalView, runsReader } from '@demiurge/projector-runs';
import { type ApprovalCommand, type ApprovalRequestSpec, decideApproval } from './approval.decider.js';
import { normalizeArguments } from './policy.js';

export type { ApprovalRequestSpec } from './approval.decider.js';

const APPROVAL = approvalFold.streamType;

/**
 * Approvals for exactly one tool call shape: (session, tool, normalized arguments), single use, until
 * `expiresAt`. Requested by the engine (the run waits) or granted ahead of time by an operator.
 */
export class ApprovalRuntime {
  constructor(
    private readonly options: { store: EventStore; clock: Clock; ids: IdGenerator; meta?: Partial<EventMeta> },
  ) {}

  /** The stream that opens an approval, for callers that append it with other streams. */
  requestStream(spec: ApprovalRequestSpec): { approvalId: string; stream: AppendStream } {
    const approvalId = this.options.ids.next(IdPrefix.approval);
    const events = decideApproval({ type: 'request', approvalId, spec }, approvalFold.initialState);
    return { approvalId, stream: { streamType: APPROVAL, streamId: approvalId, expectedVersion: 'no_stream', events } };
  }

  /** An operator approves a call before the model makes it: requested and granted in one commit. */
  async preApprove(spec: ApprovalRequestSpec & { actor: Actor; note?: string }): Promise<string> {
    const approvalId = this.options.ids.next(IdPrefix.approval);
    const command = { type: 'request', approvalId, spec, grant: { note: spec.note } } as const;
    await this.options.store.append(
      {
        streamType: APPROVAL,
        streamId: approvalId,
        expectedVersion: 'no_stream',
        events: decideApproval(command, approvalFold.initialState),
      },
      { meta: { actor: spec.actor, sessionId: spec.sessionId, ...this.options.meta } },
    );
    return approvalId;
  }

  grant(approvalId: string, actor: Actor, note?: string): Promise<void> {
    return this.decide({ type: 'grant', approvalId, note }, actor);
  }

  deny(approvalId: string, actor: Actor, note?: string): Promise<void> {
    return this.decide({ type: 'deny', approvalId, note }, actor);
  }

  /** Expires an open (requested or granted) approval; one no longer open is left as it is. */
  expire(approvalId: string): Promise<void> {
    return this.decide({ type: 'expire', approvalId }, { kind: 'system', id: 'approvals' });
  }

  async get(approvalId: string): Promise<ApprovalView> {
    const view = await this.reader().approval(approvalId);
    if (!view) throw new NotFoundError('approval', approvalId);
    return view;
  }

  /** Open (requested or granted) approvals, optionally of one session. */
  async listOpen(sessionId?: string): Promise<ApprovalView[]> {
    const open = await this.reader().openApprovals();
    const views = await Promise.all(open.map((e) => this.get(e.approvalId)));
    return sessionId ? views.filter((v) => v.sessionId === sessionId) : views;
  }

  /** Approvals of a session, every status (history). */
  async listForSession(sessionId: string): Promise<ApprovalView[]> {
    const entries = await this.reader().approvalsOfSession(sessionId);
    return Promise.all(entries.map((e) => this.get(e.approvalId)));
  }

  /**
   * A granted, unexpired, unused approval for exactly this call (session, tool, normalized arguments).
   * Approvals found expired on the way are recorded as expired.
   */
  async findUsable(sessionId: string, tool: string, args: unknown): Promise<ApprovalView | undefined> {
    const wanted = normalizeArguments(args ?? {});
    const now = new Date(this.options.clock.now()).toISOString();
    for (const view of await this.listOpen(sessionId)) {
      if (view.status !== 'granted' || view.tool !== tool || normalizeArguments(view.arguments ?? {}) !== wanted)
        continue;
      if (view.expiresAt && view.expiresAt <= now) {
        await this.expire(view.approvalId);
        continue;
      }
      return view;
    }
    return undefined;
  }

  /** The approval's part of the commit that starts the approved call: `approval.consumed`. */
  async consumeStream(approvalId: string, toolCallId: string): Promise<AppendStream> {
    const loaded = await loadAggregate(this.options.store, approvalFold, approvalId);
    return streamAppend(APPROVAL, loaded, decideApproval({ type: 'consume', approvalId, toolCallId }, loaded.state));
  }

  /** Loads the approval with the one approval fold, decides the command on it, and appends. */
  private decide(command: ApprovalCommand, actor: Actor): Promise<void> {
    const { approvalId } = command;
    return commandLoop(this.options.store, async () => {
      const loaded = await loadAggregate(this.options.store, approvalFold, approvalId);
      if (loaded.state.status === 'none') throw new NotFoundError('approval', approvalId);
      const checked = decideApproval(command, loaded.state);
      return {
        streams: checked.length > 0 ? [streamAppend(APPROVAL, loaded, checked)] : [],
        result: undefined,
        options: { meta: { actor, ...this.options.meta } },
      };
    });
  }

  private reader() {
    return runsReader(this.options.store);
  }
}
