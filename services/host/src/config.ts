import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DemiurgeError, ErrorCode, formatPath } from '@demiurge/contracts';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { DEFAULT_HTTP_ADDR, parseHttpAddress } from './dashboard/address.js';

/** `<home>/config.yaml`, every key optional; unknown keys are refused so a typo is an error, not a silent default. */
export const HostConfig = z.strictObject({
  provider: z
    .strictObject({
      name: z.enum(['fake', 'openai']).default('fake'),
      model: z.string().min(1).optional(),
      base_url: z.url().optional(),
      /** The environment variable holding the API key (default OPENAI_API_KEY); keys never live in the file. */
      api_key_env: z.string().min(1).optional(),
      /** A fake provider script (YAML or JSON), relative to the home. */
      fake_script: z.string().min(1).optional(),
      timeout_ms: z.number().int().positive().optional(),
      max_retries: z.number().int().nonnegative().optional(),
      /** The model's context window in tokens (default: by model name; see docs/compaction.md). */
      context_window: z.number().int().positive().optional(),
    })
    .default({ name: 'fake' }),
  /**
   * Context compaction (docs/compaction.md): before a model round whose estimated request passes `threshold` of
   * the context window, the messages older than the last `keep_messages` are summarized by the model.
   */
  compaction: z
    .strictObject({
      enabled: z.boolean().default(true),
      threshold: z.number().gt(0).lt(1).default(0.8),
      keep_messages: z.number().int().nonnegative().default(4),
    })
    .default({ enabled: true, threshold: 0.8, keep_messages: 4 }),
  /** The Agent Core directory (default: the bundled `agent/`). */
  core: z.string().min(1).optional(),
  /** The workspace root of file and shell tools (default: the current directory). */
  workspace: z.string().min(1).optional(),
  /**
   * The event store: `kind: sqlite` (default, the home's `runtime/runtime.sqlite3`) or `kind: postgres` with
   * `url: postgres://user:password@host:port/database`. `DEMIURGE_STORE_URL` (a postgres:// URL) wins over both.
   */
  store: z
    .strictObject({
      kind: z.enum(['sqlite', 'postgres']).default('sqlite'),
      url: z.string().refine(isPostgresUrl, 'must be a postgres:// or postgresql:// URL').optional(),
      /** SQLite only. */
      synchronous: z.enum(['FULL', 'NORMAL']).default('FULL'),
      /**
       * SQLite only: the target lag of the asynchronous read models (operator-status) behind the log; reads
       * are caught up first whatever it is. Default 50.
       */
      async_projection_lag_ms: z.number().int().positive().optional(),
    })
    .superRefine((store, ctx) => {
      if (store.kind === 'postgres' && !store.url) {
        ctx.addIssue({ code: 'custom', path: ['url'], message: 'is required with kind: postgres' });
      }
      if (store.kind === 'sqlite' && store.url) {
        ctx.addIssue({ code: 'custom', path: ['url'], message: 'is only for kind: postgres (set kind: postgres)' });
      }
    })
    .default({ kind: 'sqlite', synchronous: 'FULL' }),
  leases: z
    .strictObject({
      run_ms: z.number().int().positive().default(30_000),
      work_ms: z.number().int().positive().default(30_000),
    })
    .default({ run_ms: 30_000, work_ms: 30_000 }),
  plan_mode: z.strictObject({ on_write: z.enum(['deny', 'ask']).default('deny') }).default({ on_write: 'deny' }),
  delivery: z
    .strictObject({
      webhook: z.strictObject({ url: z.url(), timeout_ms: z.number().int().positive().default(10_000) }).optional(),
      poll_ms: z.number().int().positive().default(250),
    })
    .default({ poll_ms: 250 }),
  scheduler: z
    .strictObject({ enabled: z.boolean().default(true), tick_ms: z.number().int().positive().default(1_000) })
    .default({ enabled: true, tick_ms: 1_000 }),
  tasks: z.strictObject({ grace_ms: z.number().int().positive().default(2_000) }).default({ grace_ms: 2_000 }),
  /**
   * The web dashboard: `serve` serves it on `addr` (`HOST:PORT`, default 127.0.0.1:7780) when this is set or
   * `--http` is given (see docs/dashboard.md).
   */
  http: z
    .strictObject({
      addr: z
        .string()
        .refine(isHttpAddress, 'must be HOST:PORT, for example 127.0.0.1:7780')
        .default(DEFAULT_HTTP_ADDR),
    })
    .optional(),
  /**
   * How long `serve` (and `gateway --stdio`) may take to close after SIGINT/SIGTERM or `operator.shutdown`;
   * past it the host says on stderr what it still waits for and exits with status 1.
   */
  shutdown: z
    .strictObject({ deadline_ms: z.number().int().positive().default(10_000) })
    .default({ deadline_ms: 10_000 }),
});
export type HostConfig = z.infer<typeof HostConfig>;

/** The configuration could not be used: the file, the key and what was wrong. */
export class ConfigError extends DemiurgeError {
  override readonly name = 'ConfigError';
  readonly code = ErrorCode.InvalidSpec;
  constructor(
    readonly source: string,
    readonly key: string,
    readonly detail: string,
    readonly line?: number,
  ) {
    super(`${source}${line ? `:${line}` : ''}: ${key}: ${detail}`);
  }
}

/** Flags and environment, applied over the file in that order (flags win). */
export interface ConfigOverrides {
  readonly provider?: 'fake' | 'openai';
  readonly model?: string;
  readonly fakeScript?: string;
  readonly core?: string;
  readonly workspace?: string;
}

export function configPath(home: string): string {
  return join(home, 'config.yaml');
}

/**
 * Reads `<home>/config.yaml` (absent: defaults), then `DEMIURGE_PROVIDER`, `DEMIURGE_MODEL`, `DEMIURGE_CORE`,
 * `DEMIURGE_WORKSPACE` and `DEMIURGE_STORE_URL` (PostgreSQL, over `store:` of the file) from the environment,
 * then flags. A bad file is one {@link ConfigError} naming the key
 * (and line).
 */
export function loadConfig(
  home: string,
  overrides: ConfigOverrides = {},
  env: NodeJS.ProcessEnv = process.env,
): HostConfig {
  const file = configPath(home);
  let raw: Record<string, unknown> = {};
  let lines: LineCounter | undefined;
  let doc: ReturnType<typeof parseDocument> | undefined;
  if (existsSync(file)) {
    lines = new LineCounter();
    // logLevel error: a complex key becomes a string key (refused as unknown) without a Node warning on stderr.
    doc = parseDocument(readFileSync(file, 'utf8'), { lineCounter: lines, prettyErrors: false, logLevel: 'error' });
    const error = doc.errors[0];
    if (error) {
      throw new ConfigError(file, '(yaml)', error.message.split('\n')[0]!, lines.linePos(error.pos[0]).line);
    }
    let value: unknown;
    try {
      value = doc.toJS() ?? {};
    } catch (error) {
      // The yaml library refuses to expand an alias bomb (a resource exhaustion attack) while converting.
      throw new ConfigError(file, '(yaml)', (error as Error).message);
    }
    if (typeof value !== 'object' || Array.isArray(value))
      throw new ConfigError(file, '(root)', 'must be a mapping of keys');
    raw = { ...value };
  }
  const merged: Record<string, unknown> = { ...raw };
  // A provider that is not a mapping (`provider: openai`) stays as written, so it is refused, not ignored.
  if (isSection(raw.provider)) {
    const provider: Record<string, unknown> = { ...mapping(raw.provider) };
    const name = overrides.provider ?? env.DEMIURGE_PROVIDER;
    if (name) provider.name = name;
    const model = overrides.model ?? env.DEMIURGE_MODEL;
    if (model) provider.model = model;
    if (overrides.fakeScript) provider.fake_script = resolve(overrides.fakeScript);
    merged.provider = provider;
  }
  const core = overrides.core ?? env.DEMIURGE_CORE;
  if (core) merged.core = resolve(core);
  const workspace = overrides.workspace ?? env.DEMIURGE_WORKSPACE;
  if (workspace) merged.workspace = resolve(workspace);
  const storeUrl = env.DEMIURGE_STORE_URL;
  if (storeUrl) {
    if (!isPostgresUrl(storeUrl)) {
      throw new ConfigError('environment', 'DEMIURGE_STORE_URL', 'must be a postgres:// or postgresql:// URL');
    }
    if (isSection(raw.store)) merged.store = { ...mapping(raw.store), kind: 'postgres', url: storeUrl };
  }
  const parsed = HostConfig.safeParse(merged);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
  // A missing key (store.url of kind: postgres) is shown at its parent's line.
  let node: { range?: [number, number] } | undefined;
  for (let depth = path.length; depth > 0 && !node; depth--) {
    node = doc?.getIn(path.slice(0, depth) as (string | number)[], true) as { range?: [number, number] } | undefined;
  }
  const line = node?.range && lines ? lines.linePos(node.range[0]).line : undefined;
  const detail = issue.code === 'unrecognized_keys' ? 'unknown key' : issue.message;
  throw new ConfigError(existsSync(file) ? file : 'configuration', formatPath(path), detail, line);
}

/** A URL a PostgreSQL client can connect with. */
function isPostgresUrl(value: string): boolean {
  if (!/^postgres(ql)?:\/\//.test(value)) return false;
  try {
    return new URL(value).hostname !== '' || value.includes('host=');
  } catch {
    return false;
  }
}

/** Whether a top-level value can hold a section's keys: a mapping, or nothing written (`provider:`). */
function isSection(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'object' && !Array.isArray(value));
}

/** A YAML mapping's keys and values (nothing for anything else). */
function mapping(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? Object.fromEntries(Object.entries(value)) : {};
}

function isHttpAddress(addr: string): boolean {
  try {
    parseHttpAddress(addr);
    return true;
  } catch {
    return false;
  }
}
