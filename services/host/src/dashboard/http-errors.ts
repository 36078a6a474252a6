import { DemiurgeError, ErrorCode, formatPath } from '@demiurge/contracts';
import { z } from 'zod';

/** An HTTP answer the dashboard gives on purpose: a status and a `{ error: { code, message } }` body. */
export class DashboardHttpError extends Error {
  override readonly name = 'DashboardHttpError';
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const STATUS_OF: Partial<Record<string, 400 | 404 | 409>> = {
  [ErrorCode.NotFound]: 404,
  [ErrorCode.IllegalTransition]: 409,
  [ErrorCode.NotResumable]: 409,
  [ErrorCode.StaleClaim]: 409,
  [ErrorCode.InvalidSpec]: 400,
  [ErrorCode.EventValidation]: 400,
};

/**
 * Any error → the status and JSON body a client gets (never a stack). Expected refusals (typed errors of
 * the runtime, bad input) keep their code and message; anything else is a 500 naming the error.
 */
export function errorAnswer(error: unknown): { status: number; body: { error: { code: string; message: string } } } {
  if (error instanceof DashboardHttpError) {
    return { status: error.status, body: { error: { code: error.code, message: error.message } } };
  }
  if (error instanceof z.ZodError) {
    const message = error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join('; ');
    return { status: 400, body: { error: { code: 'bad_request', message } } };
  }
  if (error instanceof DemiurgeError) {
    return { status: STATUS_OF[error.code] ?? 500, body: { error: { code: error.code, message: error.message } } };
  }
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { status: 500, body: { error: { code: 'internal', message: `the host failed to answer: ${message}` } } };
}
