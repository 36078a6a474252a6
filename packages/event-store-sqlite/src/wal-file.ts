import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** What a `-wal` file holds, read frame by frame as SQLite's recovery reads it (salts and checksums). */
export interface WalScan {
  /** Bytes in the `-wal` file (0 when there is none). */
  readonly bytes: number;
  /** Frames SQLite will use: the valid prefix up to its last commit frame. */
  readonly committedFrames: number;
  /**
   * Set when frames that look committed (the current salts, commit frames) lie beyond a frame that no longer
   * checks out: committed transactions that SQLite would silently drop. A torn tail (a crash while writing
   * the last transaction) has at most one commit frame past the break and is not damage.
   */
  readonly damage?: string;
}

/**
 * Reads `<db>-wal` without SQLite: opening it through SQLite would recover and later checkpoint it. Another
 * process may restart the WAL while it is read (new salts in the header, then frames overwritten from the
 * start): a scan that saw the header change is repeated, and one that keeps seeing it change reports no damage.
 */
export function scanWal(dbPath: string, dbPageSize: number): WalScan {
  for (let attempt = 0; attempt < 5; attempt++) {
    const scan = withoutVanishedWal(() => scanOnce(dbPath, dbPageSize));
    if (scan) return scan;
  }
  return withoutVanishedWal(() => ({
    bytes: existsSync(`${dbPath}-wal`) ? statSync(`${dbPath}-wal`).size : 0,
    committedFrames: 0,
  }));
}

/**
 * The WAL can vanish between a look and a read: the last connection of another process closing deletes it once
 * its frames are in the database. A WAL that is gone holds nothing.
 */
function withoutVanishedWal<T>(scan: () => T): T | WalScan {
  try {
    return scan();
  } catch (err) {
    if ((err as { code?: unknown })?.code === 'ENOENT') return { bytes: 0, committedFrames: 0 };
    throw err;
  }
}

/** One pass over the WAL; undefined when its header changed meanwhile. */
function scanOnce(dbPath: string, dbPageSize: number): WalScan | undefined {
  const path = `${dbPath}-wal`;
  if (!existsSync(path)) return { bytes: 0, committedFrames: 0 };
  const bytes = statSync(path).size;
  if (bytes < WAL_HEADER) return { bytes, committedFrames: 0 };
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(WAL_HEADER);
    readSync(fd, header, 0, WAL_HEADER, 0);
    const magic = header.readUInt32BE(0);
    const bigEndian = (magic & 1) === 1;
    const headerPageSize = header.readUInt32BE(8);
    const pageSize = isPageSize(headerPageSize) ? headerPageSize : dbPageSize;
    const salt1 = header.readUInt32BE(16);
    const salt2 = header.readUInt32BE(20);
    const headerOk =
      (magic & 0xfffffffe) === 0x377f0682 &&
      header.readUInt32BE(4) === 3007000 &&
      isPageSize(headerPageSize) &&
      sameSum(checksum(header, 0, 24, [0, 0], bigEndian), header, 24);
    const frameSize = FRAME_HEADER + pageSize;
    const frames = Math.floor((bytes - WAL_HEADER) / frameSize);
    const frame = Buffer.alloc(frameSize);
    let sum: [number, number] = headerOk ? [header.readUInt32BE(24), header.readUInt32BE(28)] : [0, 0];
    let committedFrames = 0;
    let brokenAt = headerOk ? -1 : 0;
    let commitsAfterBreak = 0;
    for (let i = 0; i < frames; i++) {
      readSync(fd, frame, 0, frameSize, WAL_HEADER + i * frameSize);
      const current = frame.readUInt32BE(8) === salt1 && frame.readUInt32BE(12) === salt2;
      const commit = frame.readUInt32BE(4) !== 0;
      if (brokenAt < 0) {
        const next = checksum(frame, FRAME_HEADER, frameSize, checksum(frame, 0, 8, sum, bigEndian), bigEndian);
        if (current && sameSum(next, frame, 16)) {
          sum = next;
          if (commit) committedFrames = i + 1;
          continue;
        }
        brokenAt = i;
      }
      if (current && commit) commitsAfterBreak++;
    }
    const after = Buffer.alloc(WAL_HEADER);
    readSync(fd, after, 0, WAL_HEADER, 0);
    if (!after.equals(header)) return undefined;
    if (commitsAfterBreak >= 2) {
      return {
        bytes,
        committedFrames,
        damage:
          brokenAt === 0 && !headerOk
            ? `its WAL header is damaged and ${commitsAfterBreak} committed transactions lie behind it`
            : `WAL frame ${brokenAt + 1} is damaged and ${commitsAfterBreak} committed transactions follow it`,
      };
    }
    return { bytes, committedFrames };
  } finally {
    closeSync(fd);
  }
}

function isPageSize(n: number): boolean {
  return n >= 512 && n <= 65536 && (n & (n - 1)) === 0;
}

function sameSum(sum: readonly [number, number], buf: Buffer, at: number): boolean {
  return sum[0] === buf.readUInt32BE(at) && sum[1] === buf.readUInt32BE(at + 4);
}

/** SQLite's WAL checksum (`walChecksumBytes`) over `buf[from, to)`, continuing from `seed`. */
function checksum(
  buf: Buffer,
  from: number,
  to: number,
  seed: readonly [number, number],
  bigEndian: boolean,
): [number, number] {
  let s0 = seed[0];
  let s1 = seed[1];
  for (let i = from; i < to; i += 8) {
    const a = bigEndian ? buf.readUInt32BE(i) : buf.readUInt32LE(i);
    const b = bigEndian ? buf.readUInt32BE(i + 4) : buf.readUInt32LE(i + 4);
    s0 = (s0 + a + s1) >>> 0;
    s1 = (s1 + b + s0) >>> 0;
  }
  return [s0, s1];
}
