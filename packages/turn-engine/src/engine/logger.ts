/**
 * The engine's logger port: what it reports instead of swallowing (a heartbeat that lost the run's lease, a
 * release that failed while the host closed). The host passes its own logger; the default writes one line
 * to stderr.
 */
export interface TurnEngineLogger {
  warn(message: string, context?: Record<string, unknown>): void;
  error(message: string, context?: Record<string, unknown>): void;
}

const line = (level: string, message: string, context?: Record<string, unknown>): string =>
  `demiurge turn-engine ${level}: ${message}${context ? ` ${JSON.stringify(context, errorFields)}` : ''}\n`;

/** Errors keep their name, code and message when a context is written as JSON. */
function errorFields(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, message: value.message, ...(typeof code === 'string' ? { code } : {}) };
  }
  return value;
}

/** The default {@link TurnEngineLogger}: one line per report on stderr. */
export const stderrLogger: TurnEngineLogger = {
  warn: (message, context) => process.stderr.write(line('warn', message, context)),
  error: (message, context) => process.stderr.write(line('error', message, context)),
};
