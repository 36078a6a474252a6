import type { RecordedEvent } from '@demiurge/contracts';
import type { ProjectorCheckpoint } from '@demiurge/event-store';
import type { CompactionView, SessionView, TranscriptEntry } from '@demiurge/projector-sessions';

/**
 * One log line: position, time, type, stream@version, the trace id when the meta records one (a host with
 * OpenTelemetry on: `trace=<id>` leads to the event's trace), and the data, shortened.
 */
export function renderEvent(event: RecordedEvent): string {
  const data = JSON.stringify(event.data);
  const shown = data.length > 100 ? `${data.slice(0, 99)}…` : data;
  const { traceId } = event.meta as { traceId?: unknown };
  const trace = typeof traceId === 'string' ? `  trace=${traceId}` : '';
  return `${String(event.position).padStart(6)}  ${event.recordedAt}  ${event.type.padEnd(18)} ${event.streamId}@${event.streamVersion}${trace}  ${shown}`;
}

/**
 * A session and its whole transcript; each compaction is marked after the last message it covers (the model's
 * view starts from its summary there; the transcript keeps every message).
 */
export function renderSession(
  session: SessionView,
  transcript: readonly TranscriptEntry[],
  compactions: readonly CompactionView[] = [],
): string[] {
  const lines = [
    `session ${session.sessionId}  "${session.title}"  [${session.status}]`,
    `  core ${session.coreId}, ${session.turnCount} turns, ${session.messageCount} messages, created ${session.createdAt}` +
      (compactions.length > 0 ? `, ${compactions.length} compactions` : ''),
  ];
  for (const m of transcript) {
    lines.push(`  ${m.role.padEnd(9)} ${m.text}`);
    for (const c of compactions.filter((x) => x.throughMessageId === m.messageId)) {
      const by = c.trigger === 'auto' ? `auto${c.runId ? ` in ${c.runId}` : ''}` : 'manual';
      lines.push(
        `  ── compacted ${c.compactionId} (${by}): the ${c.messageCount} messages above are summarized for the model ` +
          `(~${c.tokens.before} -> ~${c.tokens.after} tokens of ${c.tokens.window}) ──`,
      );
      const summary = c.summary.replace(/\s+/g, ' ');
      lines.push(`  summary   ${summary.length > 160 ? `${summary.slice(0, 159)}…` : summary}`);
    }
  }
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
