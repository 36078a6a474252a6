/** What a rebuild child is asked to do: replay the log through the store or the raw loop. */
export type RebuildMode = 'store' | 'raw';

/** The events per transaction of both rebuilds (the store's default). */
export const REBUILD_BATCH = 5000;

/** The message a rebuild child sends its parent when done. */
export interface RebuildChildReport {
  readonly mode: RebuildMode;
  readonly events: number;
  readonly durationMs: number;
  /** `process.resourceUsage().maxRSS` at the end: peak resident set, KiB. */
  readonly maxRssKiB: number;
}
