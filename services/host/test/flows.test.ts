import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { verifyLog } from '@demiurge/lifecycle';
import { OutboxCollections, outboxProjector } from '@demiurge/projector-outbox';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CORE_DIR, DemiurgeApp, scheduleOverview } from '../src/index.js';

let home: string;
let workspace: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'demiurge-flow-'));
  workspace = mkdtempSync(join(tmpdir(), 'demiurge-ws-'));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

function writeScript(steps: unknown[]): string {
  const path = join(home, 'script.json');
  writeFileSync(path, JSON.stringify(steps));
  return path;
}

async function countingSink(): Promise<{ server: Server; url: string; received: { key: string; text: string }[] }> {
  const received: { key: string; text: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ key: String(req.headers['idempotency-key']), text: JSON.parse(body).text });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"ok"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

describe('the host end to end', () => {
  it("a turn runs through agent/'s pipelines; deliveries reach the operator and a webhook sink", async () => {
    const sink = await countingSink();
    writeFileSync(join(home, 'config.yaml'), `delivery:\n  webhook:\n    url: ${sink.url}\n  poll_ms: 50\n`);
    const app = await DemiurgeApp.start({ home, overrides: { workspace }, env: {} });
    try {
      const pushed = firstValueFrom(app.pushes$.pipe(take(1), toArray()));
      const submitted = await app.submit({ text: 'hello core' });
      expect((await submitted.outcome).status).toBe('completed');
      // The core's instructions reached the model as context (base_input), recorded on turn.started.
      const started = (await app.store.readAll()).find((e) => e.type === 'turn.started')!;
      expect((started.data as { context?: unknown[] }).context?.length).toBeGreaterThan(0);
      // base_output sent the answer once: one assistant message, one delivery per route.
      const history = await app.runtime.sessions.history(submitted.sessionId);
      expect(history.filter((m) => m.role === 'assistant').map((m) => m.text)).toEqual(['[fake] hello core']);
      expect((await pushed)[0]!.payload.text).toBe('[fake] hello core');
      // A session bound to the webhook channel delivers through the webhook route, once.
      const hooked = await app.submit({ text: 'hello hook', channel: 'webhook', conversationKey: 'room-1' });
      expect((await hooked.outcome).status).toBe('completed');
      for (let i = 0; i < 100 && sink.received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 200));
      expect(sink.received.map((r) => r.text)).toEqual(['[fake] hello hook']);
      expect(sink.received[0]!.key).toMatch(/^dlv_/);
      const outbox = await app.store
        .projection(outboxProjector.name)
        .list<{ status: string }>(OutboxCollections.deliveries);
      expect(outbox.length).toBeGreaterThan(0);
      expect((await verifyLog(app.store.iterate())).violations).toEqual([]);
    } finally {
      await app.close();
      sink.server.close();
    }
  });

  it('a parent turn delegates a child agent and a terminal command, waits with yield_until and cancels one', async () => {
    const fakeScript = writeScript([
      {
        content: 'Delegating.',
        tool_calls: [
          { name: 'delegate_task', arguments: { goal: 'summarise the plan' } },
          { name: 'shell', arguments: { command: 'sleep 30', background: true } },
        ],
      },
      // The child session plays step 0 again: its own transcript has no assistant messages yet.
      { content: 'waiting' },
    ]);
    const app = await DemiurgeApp.start({ home, overrides: { workspace, fakeScript }, env: {} });
    try {
      const submitted = await app.submit({ text: 'plan it' });
      await submitted.outcome;
      const tasks = await app.runtime.controlPlane.listTasks(submitted.sessionId);
      expect(tasks.map((t) => t.kind).sort()).toEqual(['agent.spawn', 'terminal.exec']);
      const child = tasks.find((t) => t.kind === 'agent.spawn')!;
      const command = tasks.find((t) => t.kind === 'terminal.exec')!;
      const waited = await app.runtime.tools.get('yield_until')!.run(
        { task_id: child.taskId, timeout_seconds: 20 },
        {
          workspaceRoot: workspace,
          signal: new AbortController().signal,
          sessionId: submitted.sessionId,
          turnId: submitted.turnId,
          runId: submitted.runId,
          toolCallId: 'tcl_01JD5Y7Q6N0000000000000001',
        },
      );
      expect(JSON.parse(waited.output)).toMatchObject({
        status: expect.stringMatching(/completed|failed/),
        timed_out: false,
      });
      for (let i = 0; i < 100; i++) {
        if (
          (await app.runtime.controlPlane.getTask({ sessionId: submitted.sessionId, taskId: command.taskId }))
            .status === 'active'
        )
          break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await app.cancelTask({ sessionId: submitted.sessionId, taskId: command.taskId }, 'not needed');
      const cancelled = await app.runtime.controlPlane.getTask({
        sessionId: submitted.sessionId,
        taskId: command.taskId,
      });
      expect(cancelled.status).toBe('cancelled');
      const childTask = await app.runtime.controlPlane.getTask({
        sessionId: submitted.sessionId,
        taskId: child.taskId,
      });
      expect(childTask.completion).toBe('acknowledged');
      const sessions = await app.runtime.sessions.list();
      expect(sessions.find((s) => s.parent?.taskId === child.taskId)?.parent?.depth).toBe(1);
      expect((await verifyLog(app.store.iterate())).violations).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('a schedule in the core fires through the running host, once per due time', async () => {
    const core = join(home, 'core');
    cpSync(resolve(DEFAULT_CORE_DIR), core, { recursive: true });
    mkdirSync(join(core, 'schedules'), { recursive: true });
    writeFileSync(join(core, 'schedules', 'pulse.yaml'), 'cron: "* * * * * *"\nprompt: pulse check\n');
    writeFileSync(join(home, 'config.yaml'), 'scheduler:\n  tick_ms: 200\n');
    const app = await DemiurgeApp.start({ home, overrides: { workspace, core }, env: {} });
    try {
      const fired = await firstValueFrom(
        app.store.events$.pipe(
          filter((e) => e.type === 'schedule_instance.completed'),
          take(1),
        ),
      );
      expect(fired).toBeDefined();
      const overview = await scheduleOverview(app.store, core, Date.now());
      expect(overview.schedules[0]).toMatchObject({ scheduleId: 'pulse', upcoming: expect.any(Array) });
      expect(overview.schedules[0]!.upcoming).toHaveLength(3);
      expect(overview.schedules[0]!.past.some((p) => p.status === 'completed')).toBe(true);
      const upcoming = await app.scheduler.upcoming(2);
      expect(upcoming[0]!.next.length).toBe(2);
      const history = await app.scheduler.history('pulse');
      expect(history.some((h) => h.status === 'completed')).toBe(true);
      const tasks = (await app.store.readAll()).filter((e) => e.type === 'task.submitted');
      expect(tasks.some((e) => (e.data as { kind: string }).kind === 'schedule.fire')).toBe(true);
    } finally {
      await app.close();
    }
    expect(
      await (async () => {
        const again = await DemiurgeApp.start({ home, overrides: { workspace, core }, env: {}, background: false });
        try {
          return (await verifyLog(again.store.iterate())).violations;
        } finally {
          await again.close();
        }
      })(),
    ).toEqual([]);
  });
});
