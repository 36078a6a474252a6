/**
 * `<what failed>: <ErrorName> (<code>): <message>` for one stderr line: what failed and why, never `undefined`
 * (a thrown non-error is shown as it is).
 *
 * @example
 * ```ts
 * describeFailure({ name: 'slot:output/audit_log session ses_1', error: new Error('the store is closed') });
 * // 'slot:output/audit_log session ses_1: Error: the store is closed'
 * ```
 */
export function describeFailure(failure: { readonly name: string; readonly error: unknown }): string {
  const { error } = failure;
  let why: string;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const kind = typeof code === 'string' && code.length > 0 ? `${error.name} (${code})` : error.name;
    why = `${kind}: ${error.message || 'no message'}`;
  } else {
    let shown: string;
    try {
      shown = typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
    } catch {
      shown = String(error);
    }
    why = `a non-error value was thrown: ${shown}`;
  }
  return `${failure.name}: ${why}`;
}
