import type { z } from 'zod';
import type { Ack, OperatorBackend, OperatorCaller, SubmitResult } from './operator-backend.js';
import { OperatorErrorCode, OperatorProtocolError } from './operator-errors.js';
import {
  CancelParams,
  CompactParams,
  HistoryParams,
  type InitializeParams,
  InterruptParams,
  ReplyApprovalParams,
  ReplyPromptParams,
  ShutdownParams,
  StatusParams,
  SubmitParams,
} from './operator-params.js';
import type { CompactResult, HistoryResult, StatusResult } from './operator-results.js';

/** The result of `operator.initialize`; `session` is the attached session's status when one was asked for. */
export interface InitializeResult {
  readonly protocol_version: number;
  readonly server: { readonly name: string; readonly version: string };
  readonly session?: unknown;
}

/** Every method: its params (as a client writes them) and its result. */
export interface OperatorMethods {
  'operator.initialize': { params: z.input<typeof InitializeParams>; result: InitializeResult };
  'operator.submit': { params: z.input<typeof SubmitParams>; result: SubmitResult };
  'operator.reply_prompt': { params: z.input<typeof ReplyPromptParams>; result: Ack };
  'operator.reply_approval': { params: z.input<typeof ReplyApprovalParams>; result: Ack };
  'operator.interrupt': { params: z.input<typeof InterruptParams>; result: Ack };
  'operator.cancel': { params: z.input<typeof CancelParams>; result: Ack };
  'operator.status': { params: z.input<typeof StatusParams>; result: StatusResult };
  'operator.history': { params: z.input<typeof HistoryParams>; result: HistoryResult };
  'operator.shutdown': { params: z.input<typeof ShutdownParams>; result: Ack };
  'operator.compact': { params: z.input<typeof CompactParams>; result: CompactResult };
}

/** A method name of the protocol. */
export type OperatorMethodName = keyof OperatorMethods;

/** Every method name, `operator.initialize` first. */
export const operatorMethodNames = [
  'operator.initialize',
  'operator.submit',
  'operator.reply_prompt',
  'operator.reply_approval',
  'operator.interrupt',
  'operator.cancel',
  'operator.status',
  'operator.history',
  'operator.shutdown',
  'operator.compact',
] as const satisfies readonly OperatorMethodName[];

/** How one backend method is reached: its params schema and the call. */
export interface Route {
  readonly params: z.ZodType;
  readonly call: (backend: OperatorBackend, params: never, caller?: OperatorCaller) => Promise<unknown>;
}

function route<S extends z.ZodType>(
  params: S,
  call: (backend: OperatorBackend, params: z.output<S>, caller?: OperatorCaller) => Promise<unknown>,
): Route {
  return { params, call: call as Route['call'] };
}

/** The methods after the handshake, each routed to exactly one backend call. */
export const backendRoutes: Readonly<Record<Exclude<OperatorMethodName, 'operator.initialize'>, Route>> = {
  'operator.submit': route(SubmitParams, (b, p, c) => b.submit(p, c)),
  'operator.reply_prompt': route(ReplyPromptParams, (b, p, c) => b.replyPrompt(p, c)),
  'operator.reply_approval': route(ReplyApprovalParams, (b, p, c) => b.replyApproval(p, c)),
  'operator.interrupt': route(InterruptParams, (b, p, c) => b.interrupt(p, c)),
  'operator.cancel': route(CancelParams, (b, p, c) => b.cancel(p, c)),
  'operator.status': route(StatusParams, (b, p, c) => b.status(p, c)),
  'operator.history': route(HistoryParams, (b, p, c) => b.history(p, c)),
  'operator.shutdown': route(ShutdownParams, (b, p, c) => b.shutdown(p, c)),
  'operator.compact': route(CompactParams, (b, p, c) => {
    if (!b.compact)
      throw new OperatorProtocolError(OperatorErrorCode.UnknownMethod, 'operator.compact is not served here');
    return b.compact(p, c);
  }),
};

/** The route of a method after the handshake, or undefined for an unknown method (or `operator.initialize`). */
export function backendRoute(method: string): Route | undefined {
  return Object.hasOwn(backendRoutes, method) ? backendRoutes[method as keyof typeof backendRoutes] : undefined;
}
