export {
  type OpenAITestServer,
  type RecordedRequest,
  type ReplyScript,
  startOpenAITestServer,
} from './openai-test-server.js';
export { openAIChunk, reply, type ScriptedReply, type ScriptedToolCall } from './replies.js';
