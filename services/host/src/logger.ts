/** How important a log record is. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Structured context of a log record (ids, a failure's code). */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * The host's logger port: what went wrong (or on) in a background loop, a recovery, a slot. The
 * runtime never writes to stderr directly; it calls this. Quiet by default: only `warn` and `error`.
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export interface LoggerOptions {
  /**
   * `text` (default): one line per record, `demiurge: <message>`, what a person reads on a terminal.
   * `json`: one JSON object per line (`level`, `time`, `msg`, and the fields), for a log collector.
   */
  readonly format?: 'text' | 'json';
  /** The least important level written; default `warn` (quiet). */
  readonly level?: LogLevel;
  /** Where lines go; default stderr. */
  readonly write?: (line: string) => void;
  readonly now?: () => number;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * A logger writing lines (text or JSON) to stderr, or to `write`.
 * @example
 * const log = createLogger({ format: 'json', level: 'info' });
 * log.error('delivery round failed: disk full', { code: 'SQLITE_FULL' });
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const least = RANK[options.level ?? 'warn'];
  const now = options.now ?? Date.now;
  const log = (level: LogLevel) => (message: string, fields?: LogFields) => {
    if (RANK[level] < least) return;
    if (options.format === 'json') {
      const record = { level, time: new Date(now()).toISOString(), msg: message, ...fields };
      write(`${JSON.stringify(record, errorFields)}\n`);
    } else {
      write(`demiurge: ${message}\n`);
    }
  };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** An error among the fields keeps its name, message and code in JSON (`JSON.stringify` of an Error is `{}`). */
function errorFields(_key: string, value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const code = (value as { code?: unknown }).code;
  return { name: value.name, message: value.message, ...(typeof code === 'string' ? { code } : {}) };
}

/** A logger that drops everything (tests that assert on nothing logged pass their own). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
