import { OperatorRequestError } from '@demiurge/operator';
import { afterEach, describe, expect, it } from 'vitest';
import { demiurge } from './cli.js';
import { openGateway } from './gateway.js';
import { ServedHome } from './served-home.js';
import { verifyHome } from './store-checks.js';

let served: ServedHome | undefined;
afterEach(async () => {
  await served?.dispose();
  served = undefined;
});

interface Event {
  type: string;
  streamId: string;
  data: Record<string, unknown>;
  meta: { actor: { kind: string; id: string } };
}

/** The log as `demiurge events --json` prints it (meta included). */
async function events(home: string, stream: string): Promise<Event[]> {
  const run = await demiurge(['events', '--json', '--home', home, '--stream', stream]);
  expect(run.code).toBe(0);
  return run.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);
}

describe('run ownership and principal scopes (seed scenario 55), on a real serving host', () => {
  it('another operator client may not cancel a run it did not start; the admin CLI may; every command records its actor', async () => {
    served = await ServedHome.start({
      script: [
        { content: 'Working.', tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30' } }] },
        { content: 'never reached' },
      ],
    });
    const owner = await openGateway(served.host.ready.socket, 'tui-alice');
    const ids = await owner.request('operator.submit', { text: 'a long job' });
    const call = await served.toolCall(ids.turn_id, (d) => d.tool === 'shell');
    await served.reader.waitFor('the job', (e) => e.streamId === call.streamId && e.type === 'tool_call.started');

    const other = await openGateway(served.host.ready.socket, 'tui-mallory');
    const refused = await other.request('operator.cancel', { run_id: ids.run_id }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OperatorRequestError);
    expect(refused).toMatchObject({ code: 'not_owner' });
    expect((refused as Error).message).toContain(
      `run ${ids.run_id} belongs to operator tui-alice; operator tui-mallory may not cancel it`,
    );
    // A session interrupt is the same cancel: refused too. Nothing was written; the run goes on.
    await expect(other.request('operator.interrupt', { session_id: ids.session_id })).rejects.toMatchObject({
      code: 'not_owner',
    });
    expect(served.types(ids.run_id)).not.toContain('run.cancel_requested');

    // The operator with the admin CLI may cancel any run.
    const cancel = await demiurge(['runs', 'cancel', ids.run_id, '--home', served.home.dir]);
    expect(cancel.code).toBe(0);
    expect((await served.turnEnd(ids.turn_id)).type).toBe('turn.cancelled');
    await served.stop('SIGTERM');

    const run = await events(served.home.dir, ids.run_id);
    expect(run.find((e) => e.type === 'run.started')?.data.principal).toEqual({ kind: 'operator', id: 'tui-alice' });
    expect(run.find((e) => e.type === 'run.started')?.meta.actor).toEqual({ kind: 'operator', id: 'tui-alice' });
    expect(run.find((e) => e.type === 'run.cancel_requested')?.meta.actor).toEqual({ kind: 'operator', id: 'cli' });
    const turn = await events(served.home.dir, ids.turn_id);
    expect(turn[0]?.meta.actor).toEqual({ kind: 'operator', id: 'tui-alice' });
    expect(await verifyHome(served.home.dir)).toMatchObject({ ok: true, problems: [] });
  }, 60_000);

  it('the client that started a run may cancel it', async () => {
    served = await ServedHome.start({
      script: [{ tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30' } }] }, { content: 'x' }],
    });
    const owner = await openGateway(served.host.ready.socket, 'tui-alice');
    const ids = await owner.request('operator.submit', { text: 'a long job' });
    const call = await served.toolCall(ids.turn_id, (d) => d.tool === 'shell');
    await served.reader.waitFor('the job', (e) => e.streamId === call.streamId && e.type === 'tool_call.started');
    expect(await owner.request('operator.cancel', { run_id: ids.run_id })).toEqual({ ok: true });
    expect((await served.turnEnd(ids.turn_id)).type).toBe('turn.cancelled');
  }, 60_000);
});
