import type { RecordedEvent } from '@demiurge/contracts';
import type { ProjectorCheckpoint } from '@demiurge/event-store';
import type { SessionView, TranscriptEntry } from '@demiurge/projector-sessions';

/** One log line: position, time, type, stream@version and the data, shortened. */
export function renderEvent(event: RecordedEvent): string {
  const data = JSON.stringify(event.data);
  const shown = data.length > 100 ? `${data.slice(0, 99)}…` : data;
  return `${String(event.position).padStart(6)}  ${event.recordedAt}  ${event.type.padEnd(18)} ${event.streamId}@${event.streamVersion}  ${shown}`;
}

export function renderSession(session: SessionView, transcript: readonly TranscriptEntry[]): string[] {
  const lines = [
    `session ${session.sessionId}  "${session.title}"  [${session.status}]`,
    `  core ${session.coreId}, ${session.turnCount} turns, ${session.messageCount} messages, created ${session.createdAt}`,
  ];
  for (const m of transcript) lines.push(`  ${m.role.padEnd(9)} ${m.text}`);
  return lines;
}

export interface ProjectionSummary extends ProjectorCheckpoint {
  readonly collections: Record<string, number>;
}

export function renderSummaries(summaries: readonly ProjectionSummary[]): string[] {
  return summaries.map((s) => {
    const counts = Object.entries(s.collections)
      .map(([name, n]) => `${name}=${n}`)
      .join(' ');
    return `projection ${s.name} v${s.version} at position ${s.position}: ${counts || '(empty)'}`;
  });
}
