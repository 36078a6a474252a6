import type { DecidedAppend, LockedEntry, LockedListing } from '@demiurge/event-store';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { StoreSchema } from './schema.js';

/** The listings of one transaction's decided appends, identical ones merged, and where each append's went. */
export interface MergedListings {
  readonly listings: readonly LockedListing[];
  /** For each decided append (in order), the merged index of each of its listings. */
  readonly slots: readonly (readonly number[])[];
}

const identity = (l: LockedListing) =>
  JSON.stringify([
    l.projector,
    l.collection,
    l.prefix ?? '',
    l.streamField ?? null,
    l.joinCollection ?? null,
    l.alsoRead ?? [],
  ]);

/** Most documents one merged listing reads. */
const MAX_LIMIT = 1000;

/**
 * Merges the listings of a transaction's decided appends: identical ones (same projector, collection, prefix,
 * stream field and join) are read once, with the sum of their limits (each decider may have to skip what the
 * ones before it in the transaction took).
 */
export function mergeListings(decided: readonly DecidedAppend<unknown>[]): MergedListings {
  const listings: LockedListing[] = [];
  const byIdentity = new Map<string, number>();
  const slots = decided.map((d) =>
    d.listings.map((l) => {
      const key = identity(l);
      const at = byIdentity.get(key);
      if (at === undefined) {
        byIdentity.set(key, listings.length);
        listings.push({ ...l, limit: Math.min(MAX_LIMIT, l.limit) });
        return listings.length - 1;
      }
      const merged = listings[at]!;
      listings[at] = { ...merged, limit: Math.min(MAX_LIMIT, merged.limit + l.limit) };
      return at;
    }),
  );
  return { listings, slots };
}

/**
 * One listed row as the statement returns it: [listing (1-based), id, doc, joined doc, stream version, stream type,
 * the `alsoRead` documents found as [their index in the flattened `alsoRead` arrays (1-based), doc]].
 */
export type ListedRow = [
  number,
  string,
  string,
  string | null,
  number | null,
  string | null,
  [number, string][] | null,
];

/** Every listing's `alsoRead`, flattened: the listing (1-based) each belongs to, in listing order. */
function alsoReads(listings: readonly LockedListing[]) {
  return listings.flatMap((l, i) =>
    (l.streamField === undefined ? [] : (l.alsoRead ?? [])).map((a) => ({ ord: i + 1, ...a })),
  );
}

/**
 * The listings as one scalar subquery (a JSON array of {@link ListedRow}s, or null), to run in the statement that
 * takes the log-head lock. Its text never changes (the listings are parameter arrays), so it is prepared once.
 * Each lookup is a lateral `LIMIT 1` on the full key with `COLLATE "C"` (the ids' collation): the prepared statement's
 * generic plan otherwise looked the joined item up by (projector, collection) alone, filtering the whole collection.
 */
export function listingsSubquery(listings: readonly LockedListing[]): RawBuilder<ListedRow[] | null> {
  const column = <T>(f: (l: LockedListing) => T) => listings.map(f);
  const also = alsoReads(listings);
  return sql<ListedRow[] | null>`(SELECT json_agg(json_build_array(q.ord, d.id, d.doc, j.doc, s.stream_version,
      s.stream_type, x.docs) ORDER BY q.ord, d.id)
    FROM unnest(${column((l) => l.projector)}::text[], ${column((l) => l.collection)}::text[],
      ${column((l) => l.prefix ?? '')}::text[], ${column((l) => l.limit)}::integer[],
      ${column((l) => l.streamField ?? null)}::text[], ${column((l) => l.joinCollection ?? null)}::text[])
      WITH ORDINALITY AS q(projector, collection, prefix, lim, field, joined, ord)
    CROSS JOIN LATERAL (SELECT p.id, p.doc FROM projection_documents p
      WHERE p.projector = q.projector AND p.collection = q.collection AND p.id >= q.prefix
        AND starts_with(p.id, q.prefix) ORDER BY p.id LIMIT q.lim) d
    LEFT JOIN LATERAL (SELECT p.doc FROM projection_documents p WHERE p.projector = q.projector
      AND p.collection = q.joined AND p.id = (d.doc::json ->> q.field) COLLATE "C" LIMIT 1) j ON true
    LEFT JOIN LATERAL (SELECT e.stream_version, e.stream_type FROM events e
      WHERE e.stream_id = (d.doc::json ->> q.field) COLLATE "C" ORDER BY e.stream_version DESC LIMIT 1) s ON true
    LEFT JOIN LATERAL (SELECT json_agg(json_build_array(a.n, f.doc)) AS docs
      FROM unnest(${also.map((a) => a.ord)}::integer[], ${also.map((a) => a.projector)}::text[],
        ${also.map((a) => a.collection)}::text[], ${also.map((a) => a.idPrefix ?? '')}::text[])
        WITH ORDINALITY AS a(ord, projector, collection, prefix, n)
      CROSS JOIN LATERAL (SELECT p.doc FROM projection_documents p WHERE p.projector = a.projector COLLATE "C"
        AND p.collection = a.collection COLLATE "C" AND p.id = (a.prefix || (d.doc::json ->> q.field)) COLLATE "C"
        LIMIT 1) f
      WHERE a.ord = q.ord) x ON true)`;
}

/** A listed entry, and the type of the stream it names (for the append's stream heads). */
export interface Listed extends LockedEntry {
  readonly streamType?: string;
  /**
   * The documents read with the entry under the lock (its joined document and its `alsoRead` ones), as
   * [projector, collection, id, text or null for absent]: the append's projectors find them without a load.
   */
  readonly read?: readonly [string, string, string, string | null][];
}

/** The statement's rows, one array per listing. */
export function parseListed(listings: readonly LockedListing[], rows: readonly ListedRow[] | null): Listed[][] {
  const out: Listed[][] = listings.map(() => []);
  const also = alsoReads(listings);
  for (const [ord, id, doc, joined, version, type, found] of rows ?? []) {
    const listing = listings[ord - 1]!;
    const parsed = JSON.parse(doc) as Record<string, unknown>;
    const field = listing.streamField;
    const streamId = field === undefined ? undefined : parsed[field];
    let read: [string, string, string, string | null][] | undefined;
    if (typeof streamId === 'string') {
      read = [];
      if (listing.joinCollection !== undefined)
        read.push([listing.projector, listing.joinCollection, streamId, joined]);
      const docs = new Map(found ?? []);
      also.forEach((a, i) => {
        if (a.ord === ord)
          read!.push([a.projector, a.collection, (a.idPrefix ?? '') + streamId, docs.get(i + 1) ?? null]);
      });
    }
    out[ord - 1]!.push({
      id,
      doc: parsed,
      ...(typeof streamId === 'string'
        ? {
            streamId,
            streamVersion: version === null ? 0 : Number(version),
            ...(type === null ? {} : { streamType: type }),
          }
        : {}),
      ...(joined === null ? {} : { joined: JSON.parse(joined) }),
      ...(read === undefined ? {} : { read }),
    });
  }
  return out;
}

/** Reads the listings again (after a catch-up moved the documents under the lock): one round trip. */
export async function readListings(tx: Kysely<StoreSchema>, listings: readonly LockedListing[]): Promise<Listed[][]> {
  if (listings.length === 0) return [];
  const { rows } = await sql<{ listed: ListedRow[] | null }>`SELECT ${listingsSubquery(listings)} AS listed`.execute(
    tx,
  );
  return parseListed(listings, rows[0]?.listed ?? null);
}
