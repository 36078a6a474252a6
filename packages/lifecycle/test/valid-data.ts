/**
 * Schema-valid data for every lifecycle event type, for appending through a real (in-memory) store
 * whose registry validates each event. `id` is the stream's aggregate id.
 */
const SES = 'ses_01JD5Y7Q6N0000000000000001';
const TRN = 'trn_01JD5Y7Q6N0000000000000001';
const MSG = 'msg_01JD5Y7Q6N0000000000000001';
const WRK = 'wrk_01JD5Y7Q6N0000000000000001';
const AT = '2026-01-01T00:01:00.000Z';
const error = { code: 'boom', message: 'it broke' };
const claim = { claimToken: 'c1' };

export const AGGREGATE_IDS: Readonly<Record<string, string>> = {
  session: SES,
  run: 'run_01JD5Y7Q6N0000000000000001',
  turn: TRN,
  tool_call: 'tcl_01JD5Y7Q6N0000000000000001',
  task: 'tsk_01JD5Y7Q6N0000000000000001',
  work: WRK,
  delivery: 'dlv_01JD5Y7Q6N0000000000000001',
  schedule_instance: 'sci_01JD5Y7Q6N0000000000000001',
  approval: 'apr_01JD5Y7Q6N0000000000000001',
  slot_run: 'slr_01JD5Y7Q6N0000000000000001',
  mcp_server: 'mcs_01JD5Y7Q6N0000000000000001',
  core: 'core:default',
};

const ID_FIELD: Readonly<Record<string, string>> = {
  session: 'sessionId',
  run: 'runId',
  turn: 'turnId',
  tool_call: 'toolCallId',
  task: 'taskId',
  work: 'workId',
  delivery: 'deliveryId',
  schedule_instance: 'scheduleInstanceId',
  approval: 'approvalId',
  slot_run: 'slotRunId',
  mcp_server: 'mcpServerId',
  core: 'coreId',
};

const EXTRA: Readonly<Record<string, object>> = {
  'core.registered': { coreId: 'default' },
  'core.revision_saved': {
    coreId: 'default',
    revision: 'a'.repeat(64),
    parent: null,
    message: 'first',
    reason: 'save',
    files: 3,
  },
  'core.evolve_claimed': { coreId: 'default', taskId: 'tsk_01JD5Y7Q6N0000000000000001', host: 'host:h:1:1' },
  'core.evolve_released': { coreId: 'default', taskId: 'tsk_01JD5Y7Q6N0000000000000001', outcome: 'saved' },
  'session.created': { title: 'A session', coreId: 'default' },
  'session.updated': { title: 'Renamed' },
  'session.archived': { reason: 'done' },
  'session.mode_changed': { mode: 'plan', previous: 'default' },
  'session.busy_mode_changed': { busyMode: 'interrupt' },
  'session.compacted': {
    compactionId: 'cmp_1',
    trigger: 'manual',
    summary: 'they said hi',
    range: { fromMessageId: MSG, throughMessageId: MSG, messageCount: 1 },
    provider: 'fake',
    model: 'fake-1',
    tokens: { before: 10, after: 4, window: 100 },
    usage: { inputTokens: 1, outputTokens: 1 },
  },
  'message.recorded': { messageId: MSG, role: 'user', text: 'hi', visibility: 'persist' },
  'turn.started': { sessionId: SES },
  'turn.completed': { sessionId: SES },
  'turn.failed': { sessionId: SES, error },
  'turn.cancelled': { sessionId: SES, reason: 'user stop' },
  'turn.model_responded': {
    runId: 'run_01JD5Y7Q6N0000000000000001',
    stepId: 's1',
    provider: 'fake',
    model: 'fake-1',
    content: 'hello',
    toolCalls: [],
    usage: { inputTokens: 1, outputTokens: 1 },
  },
  'run.queued': { sessionId: SES },
  'run.started': { owner: 'host-a' },
  'run.waiting': { reason: 'input' },
  'run.paused': { reason: 'asked' },
  'run.blocked': { reason: 'approval', resumable: true },
  'run.resumed': {},
  'run.cancel_requested': { reason: 'user' },
  'run.cancelled': { reason: 'user', resumable: false },
  'run.failed': { error },
  'run.checkpointed': { checkpointId: 'ckp-1', stage: 'model' },
  'run.owner_claimed': { owner: 'host-a', leaseToken: 'l1', leaseUntil: AT },
  'run.owner_heartbeat': { owner: 'host-a', leaseToken: 'l1', leaseUntil: AT },
  'run.owner_lease_expired': { owner: 'host-a', leaseToken: 'l1' },
  'tool_call.requested': { sessionId: SES, turnId: TRN, stepId: 'step-1', tool: 'fs.write', idempotent: false },
  'tool_call.denied': { policy: 'plan_mode', reason: 'writes need approval' },
  'tool_call.succeeded': {},
  'tool_call.failed': { error },
  'tool_call.cancelled': { reason: 'turn cancelled' },
  'tool_call.unknown': { reason: 'crash' },
  'tool_call.process_started': { spawnId: 'spn-1', host: 'h1', pid: 42, pgid: 42, platform: 'linux' },
  'tool_call.process_stopped': { pid: 42, signal: 'SIGTERM', reason: 'its host died' },
  'task.submitted': { sessionId: SES, kind: 'terminal.exec', title: 'ls' },
  'task.started': { worker: 'w1' },
  'task.waiting': { reason: 'child task' },
  'task.blocked': { reason: 'approval', resumable: true },
  'task.failed': { error },
  'task.cancelled': { reason: 'user' },
  'task.log': { stream: 'stdout', text: 'ok' },
  'task.completion_ready': { outcome: 'completed' },
  'task.completion_acknowledged': { consumer: 'parent' },
  'work.enqueued': { kind: 'delivery.send', subjectId: 'dlv_01JD5Y7Q6N0000000000000001' },
  'work.claimed': { ...claim, attempt: 1, owner: 'host-a', leaseUntil: AT },
  'work.running': claim,
  'work.sending': claim,
  'work.heartbeat': { ...claim, leaseUntil: AT },
  'work.succeeded': claim,
  'work.failed': { ...claim, error },
  'work.cancelled': { reason: 'user' },
  'work.unknown': { ...claim, reason: 'crash mid-send' },
  'work.lease_expired': { ...claim, attempt: 1 },
  'work.corrupt': { detail: 'bad payload' },
  'delivery.queued': { sessionId: SES, messageId: MSG, workId: WRK, channel: 'cli' },
  'delivery.sending': { attempt: 1 },
  'delivery.failed': { error },
  'delivery.unrouted': { reason: 'no route' },
  'delivery.unknown': { reason: 'crash' },
  'schedule_instance.scheduled': { scheduleId: 'sch_01JD5Y7Q6N0000000000000001', dueAt: AT },
  'schedule_instance.failed': { error },
  'slot.started': { sessionId: SES, coreId: 'default', slotId: 'base_input', phase: 'input', mode: 'serial' },
  'slot.finished': { durationMs: 3 },
  'slot.failed': { error, policy: 'soft' },
  'slot.timed_out': { timeoutSeconds: 5, policy: 'hard' },
  'task.process_started': { spawnId: 'spn-1', host: 'h1', pid: 42, pgid: 42, platform: 'linux' },
  'task.artifact_recorded': { artifactId: 'art-1', name: 'stdout', path: '/tmp/x', bytes: 3 },
  'mcp.server_starting': { server: 'fs', coreId: 'default', host: 'h1', transport: 'stdio', target: 'node fs.js' },
  'mcp.server_started': { attempt: 1, pid: 42, tools: [{ name: 'fs__read_file', tool: 'read_file', readOnly: true }] },
  'mcp.tools_changed': {
    tools: [{ name: 'fs__list', tool: 'list', readOnly: true }],
    added: ['fs__list'],
    removed: ['fs__read_file'],
  },
  'mcp.server_crashed': { reason: 'exited with code 1', nextAttempt: 2, restartInMs: 500 },
  'mcp.server_failed': { reason: 'exited with code 1', attempts: 5 },
  'mcp.server_stopped': { reason: 'the host closed' },
  'approval.requested': { sessionId: SES, action: 'fs.write', reason: 'plan mode' },
};

/** Valid data for `type` on a stream of `streamType`, merged with the sample's own data (guard variants). */
export function validData(streamType: string, type: string, sample: unknown): Record<string, unknown> {
  const idField = ID_FIELD[streamType]!;
  const own: Record<string, unknown> = { [idField]: AGGREGATE_IDS[streamType]! };
  // Events recorded on a session stream belong to their own aggregate but name the session.
  if (streamType === 'session' && type.startsWith('turn.')) Object.assign(own, { turnId: TRN });
  if (streamType === 'session' && type === 'message.recorded') Object.assign(own, { sessionId: SES });
  return { ...own, ...EXTRA[type], ...(sample as object | undefined) };
}
