import { afterEach, describe, expect, it } from 'vitest';
import { coreHome, EVOLVE_SCRIPT, eventsOf } from './core-home.js';
import { startDashboard } from './dashboard-host.js';
import { INIT, rawGateway, request, type ServeProcess } from './serve-process.js';

let h: ReturnType<typeof coreHome> | undefined;
let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop('SIGKILL');
  serve = undefined;
  h?.remove();
  h = undefined;
});

const HANDSHAKE = { protocol_version: 1, build_stamp: 'demiurge-operator-v1' };
const mentions = (text: string) => (f: Record<string, unknown>) => JSON.stringify(f).includes(text);

describe('/evolve and /rollback through the operator protocol; plan mode treats evolve as a write', () => {
  it('a session connection evolves and rolls back the core; plan mode denies both; operator.status and the dashboard show the revision', async () => {
    h = coreHome([
      { match: 'please evolve', tool_calls: [{ name: 'evolve_core', arguments: { goal: 'add a shout slot' } }] },
      { match: 'please evolve', content: 'I could not' },
      ...EVOLVE_SCRIPT,
    ]);
    const { cli, json, home, workspace } = h;
    await cli('init');
    await cli('core', 'save');
    const base = (await json<{ current: string }>('core', 'versions')).current;

    // The model's evolve_core in plan mode: denied with plan mode's explanation, nothing submitted.
    expect((await cli('run', '--plan', 'please evolve')).code).toBe(0);
    const denied = (await eventsOf(home)).find((e) => e.type === 'tool_call.denied');
    expect(denied?.data.reason).toMatch(/^plan mode denies write\.file effects: evolve_core was not run/);
    expect((await eventsOf(home)).some((e) => e.type === 'task.submitted')).toBe(false);

    const dashboard = await startDashboard(home, workspace);
    serve = dashboard;
    const page = async () => (await (await dashboard.api('/')).text()).replace(/<[^>]+>/g, '');
    expect(await page()).toContain(`core default revision #1 ${base.slice(0, 12)}`);
    const gw = await rawGateway(serve.socket);
    gw.write(request(1, 'operator.initialize', HANDSHAKE));
    await gw.take((f) => f.id === 1);
    gw.write(request(2, 'operator.command', { text: '/plan on' }));
    await gw.take((f) => f.id === 2);
    gw.write(request(3, 'operator.command', { text: '/evolve add a shout slot' }));
    expect((await gw.take((f) => f.id === 3)).result).toEqual({ handled: true, exit: false });
    await gw.take(mentions('/evolve changes the Agent Core: plan mode denies write.file effects'));
    gw.write(request(4, 'operator.command', { text: '/plan off' }));
    await gw.take((f) => f.id === 4);
    gw.write(request(5, 'operator.command', { text: '/evolve add a shout slot' }));
    const submitted = await gw.take(mentions('evolve task tsk_'));
    const taskId = /evolve task (tsk_\w+)/.exec(JSON.stringify(submitted))?.[1] as string;
    const deadline = Date.now() + 60_000;
    const show = async () => (await json<{ task: { status: string } }>('tasks', 'show', taskId)).task;
    let task = await show();
    while (!['completed', 'failed'].includes(task.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 300));
      task = await show();
    }
    expect(task.status).toBe('completed');
    const evolved = (await json<{ current: string }>('core', 'versions')).current;
    expect(evolved).not.toBe(base);

    const status = await rawGateway(serve.socket);
    status.write(request(1, 'operator.initialize', INIT) + request(2, 'operator.status'));
    expect(((await status.take((f) => f.id === 2)).result as { core: unknown }).core).toEqual({
      id: 'default',
      revision: evolved,
      number: 2,
    });

    gw.write(request(6, 'operator.command', { text: `/rollback ${base.slice(0, 10)}` }));
    await gw.take(mentions('rolled back: revision #3'));
    status.write(request(3, 'operator.status'));
    expect(((await status.take((f) => f.id === 3)).result as { core: { revision: string } }).core.revision).toBe(base);
    expect(await page()).toContain(`core default revision #3 ${base.slice(0, 12)}`);
    gw.write(request(7, 'operator.command', { text: '/versions' }));
    await gw.take(mentions('#3'));
    gw.close();
    status.close();
  }, 180_000);
});
