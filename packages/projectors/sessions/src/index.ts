export {
  bindingKey,
  type CompactionView,
  compactionKey,
  SessionCollections,
  type SessionView,
  sessionsProjector,
  type TranscriptEntry,
  type TurnView,
  transcriptKey,
  turnKey,
} from './sessions.projector.js';
export { type SessionsReader, sessionsReader } from './sessions.reader.js';
