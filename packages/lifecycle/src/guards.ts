/** Reads one field of an event's data without trusting its shape (data from a log is unknown). */
export function dataField(data: unknown, key: string): unknown {
  return typeof data === 'object' && data !== null ? Reflect.get(data, key) : undefined;
}

/** Guard: the event's data carries a `retryAt` time. */
export function hasRetryAt({ event }: { event: { data?: unknown } }): boolean {
  return typeof dataField(event.data, 'retryAt') === 'string';
}

/** Guard: the event's data carries `decision` equal to the guard's `decision` param. */
export function decisionIs({ event }: { event: { data?: unknown } }, params: { decision: string }): boolean {
  return dataField(event.data, 'decision') === params.decision;
}
