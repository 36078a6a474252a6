/**
 * A time from event data as `Date#toISOString()`: the schemas accept any ISO precision, while views
 * and clients compare times as strings, which needs one form.
 * @example
 * isoTime('2026-01-01T00:00:05Z'); // '2026-01-01T00:00:05.000Z'
 */
export const isoTime = (time: string): string => new Date(time).toISOString();
