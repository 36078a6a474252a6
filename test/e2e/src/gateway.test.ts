import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnDemiurge, tempHome } from './cli.js';
import { recordGolden } from './golden-record.js';
import { INIT, rawGateway, request, type ServeProcess, startServe, writeHostHome } from './serve-process.js';

let home: ReturnType<typeof tempHome>;
let serve: ServeProcess | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  await serve?.stop('SIGKILL');
  serve = undefined;
  home.remove();
});

describe('the operator gateway answers every request, in order (real host)', () => {
  it('a status refused before initialize does not undo the initialize pipelined right behind it', async () => {
    const ws = writeHostHome(home.path);
    serve = await startServe(home.path, ws);
    const gw = await rawGateway(serve.socket);
    // Both lines in one write: the server reads them together.
    gw.write(request('early', 'operator.status') + request('init', 'operator.initialize', INIT));
    expect(await gw.take((f) => f.id === 'early')).toMatchObject({ error: { code: 'protocol_mismatch' } });
    expect(await gw.take((f) => f.id === 'init')).toMatchObject({ result: { protocol_version: 1 } });
    await gw.take((f) => f.event === 'operator.ready');
    gw.write(request('later', 'operator.status'));
    const later = await gw.take((f) => f.id === 'later');
    expect(later.error).toBeUndefined();
    expect(later).toMatchObject({ result: { host: { closing: false } } });
    gw.close();
  });

  it('gateway --stdio answers every request read before the end of input and delivers the answer of a submit', async () => {
    const ws = writeHostHome(home.path);
    const gateway = spawnDemiurge(['gateway', '--stdio', '--home', home.path, '--workspace', ws]);
    gateway.child.stdin!.end(
      request(1, 'operator.initialize', INIT) +
        request(2, 'operator.submit', { text: 'hello there' }) +
        request(3, 'operator.status') +
        request(4, 'operator.history', { session_id: 'ses_nope' }),
    );
    const timer = setTimeout(() => gateway.child.kill('SIGKILL'), 20_000);
    const result = await gateway.exited.finally(() => clearTimeout(timer));
    expect(result.code).toBe(0);
    const frames = result.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            id?: number;
            event?: string;
            result?: unknown;
            error?: unknown;
            payload?: Record<string, unknown>;
          },
      );
    const answered = frames.filter((f) => f.id !== undefined).map((f) => f.id);
    expect(answered.sort()).toEqual([1, 2, 3, 4]);
    expect(frames.find((f) => f.id === 4)?.error).toMatchObject({ code: 'invalid_params' });
    const submitted = frames.find((f) => f.id === 2)?.result as { turn_id: string; session_id: string };
    expect(submitted.turn_id).toMatch(/^trn_/);
    const turnEnd = frames.find(
      (f) => f.event === 'operator.status' && f.payload?.subject === 'turn' && f.payload.turn_id === submitted.turn_id,
    );
    expect(turnEnd?.payload).toMatchObject({ state: 'completed' });
    const delivered = frames.find((f) => f.event === 'operator.deliver');
    expect(delivered?.payload).toMatchObject({ session_id: submitted.session_id, text: '[fake] hello there' });
    await recordGolden('e2e-gateway-submit', home.path);
  });
});
