import type { EventMeta, EventRegistry, RecordedEvent } from '@demiurge/contracts';
import type { EventRow } from '@demiurge/event-store/adapter';

export type { EventRow };

export const EVENT_COLUMNS =
  'position, event_id, stream_type, stream_id, stream_version, type, schema_version, data, meta, recorded_at';

/** Turns a row into a recorded event, upcasting and validating its data. */
export function decodeRow(registry: EventRegistry, row: EventRow): RecordedEvent {
  return {
    position: row.position,
    eventId: row.event_id,
    streamType: row.stream_type,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    type: row.type,
    schemaVersion: registry.get(row.type).schemaVersion,
    data: registry.read(row.type, row.schema_version, JSON.parse(row.data)),
    meta: JSON.parse(row.meta) as EventMeta,
    recordedAt: row.recorded_at,
  };
}
