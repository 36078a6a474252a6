import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { coreHome, eventsOf } from './core-home.js';
import { type ServeProcess, startServe } from './serve-process.js';

let h: ReturnType<typeof coreHome> | undefined;
let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop('SIGKILL');
  serve = undefined;
  h?.remove();
  h = undefined;
});

/** An input slot `extra` added to the working copy only (not saved): valid, so a host could load it. */
function addExtraInputSlot(core: string): void {
  mkdirSync(join(core, 'input', 'extra'), { recursive: true });
  writeFileSync(join(core, 'input', 'extra', 'slot.yaml'), 'entrypoint: module.mjs\n');
  writeFileSync(join(core, 'input', 'extra', 'module.mjs'), 'export default async function extra() {}\n');
  const pipelines = join(core, 'pipelines.yaml');
  writeFileSync(
    pipelines,
    readFileSync(pipelines, 'utf8').replace('serial: [base_input]', 'serial: [base_input, extra]'),
  );
}

const schedule = (core: string, id: string) => {
  mkdirSync(join(core, 'schedules'), { recursive: true });
  writeFileSync(join(core, 'schedules', `${id}.yaml`), `cron: "* * * * * *"\nprompt: pulse ${id}\nenabled: true\n`);
};

describe('what hosts read of the core comes from revisions, never from the working copy edited meanwhile', () => {
  it("delegate_task's slot ids are those of the revision the turn is pinned to", async () => {
    const delegate = {
      content: 'delegating',
      tool_calls: [
        { name: 'delegate_task', arguments: { goal: 'look around', input_slots: ['extra'], notify_policy: 'silent' } },
      ],
    };
    // One conversation (both runs go to the default session, which keeps only final answers): step n answers n
    // assistant messages, so the first run plays steps 0-2 (two delegations refused), the second steps 1-2.
    h = coreHome([{ match: 'look around', content: 'looked' }, delegate, delegate, { content: 'done' }]);
    const { cli, home, core } = h;
    await cli('init');
    expect((await cli('core', 'save', '--message', 'base')).code).toBe(0);
    addExtraInputSlot(core); // an edit of the working copy, not saved: no turn may use `extra`
    expect((await cli('run', 'delegate with extra')).code).toBe(0);
    const events = await eventsOf(home);
    const call = events.find((e) => e.type === 'tool_call.requested' && e.data.tool === 'delegate_task');
    const failed = events.find((e) => e.type === 'tool_call.failed' && e.data.toolCallId === call?.data.toolCallId);
    expect(failed?.data.error.message).toBe('unknown input slots extra; input slots: base_input');
    expect(events.filter((e) => e.type === 'task.submitted')).toEqual([]);

    // Saved, `extra` is the current revision's: the next turn (pinned to it) may select it.
    expect((await cli('core', 'save', '--message', 'extra')).code).toBe(0);
    expect((await cli('run', 'delegate with extra again')).code).toBe(0);
    const submitted = (await eventsOf(home)).filter((e) => e.type === 'task.submitted');
    expect(submitted.map((e) => [e.data.kind, e.data.input?.inputSlots])).toEqual([['agent.spawn', ['extra']]]);
  }, 180_000);

  it('hosts tick, and status shows, the schedules of the current revision, not of the working copy', async () => {
    h = coreHome([{ content: 'pulse answered' }]);
    const { cli, json, home, core, workspace } = h;
    const config = join(home, 'config.yaml');
    writeFileSync(config, readFileSync(config, 'utf8').replace('  enabled: false', '  enabled: true\n  tick_ms: 200'));
    schedule(core, 'saved_pulse');
    await cli('init');
    expect((await cli('core', 'save', '--message', 'a pulse every second')).code).toBe(0);
    rmSync(join(core, 'schedules', 'saved_pulse.yaml')); // the working copy drops it and adds another, unsaved
    schedule(core, 'draft_pulse');

    const status = await json<{ schedules: { schedules: { scheduleId: string }[] } }>('status');
    expect(status.schedules.schedules.map((s) => s.scheduleId)).toEqual(['saved_pulse']);
    serve = await startServe(home, workspace);
    const deadline = Date.now() + 60_000;
    let scheduled: string[] = [];
    while (Date.now() < deadline) {
      const events = await eventsOf(home);
      scheduled = events.filter((e) => e.type === 'schedule_instance.completed').map((e) => e.streamId);
      if (scheduled.length >= 1) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    await serve.stop('SIGTERM');
    serve = undefined;
    expect(scheduled.length).toBeGreaterThan(0);
    const prompts = new Set(
      (await eventsOf(home))
        .filter((e) => e.type === 'message.recorded' && e.data.role === 'user')
        .map((e) => e.data.text),
    );
    expect([...prompts]).toEqual(['pulse saved_pulse']);
  }, 180_000);
});
