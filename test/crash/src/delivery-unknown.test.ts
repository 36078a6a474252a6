import { afterEach, describe, expect, it } from 'vitest';
import { demiurgeJson, sleep } from './cli.js';
import { recordGolden } from './golden-record.js';
import { seedWebhookSessions } from './home.js';
import { ServedHome } from './served-home.js';
import { verifyHome } from './store-checks.js';
import { startWebhookSink, type WebhookSink } from './webhook-sink.js';

let served: ServedHome | undefined;
let sink: WebhookSink | undefined;
afterEach(async () => {
  await served?.dispose();
  served = undefined;
  await sink?.close();
  sink = undefined;
});

describe('a delivery whose send a SIGKILL cut (real serve child, real webhook receiver)', () => {
  it('the next host records it unknown once its lease runs out, never sends it again, and the operator resolves it', async () => {
    // The receiver takes every POST and answers only after the host is dead: the send's outcome is unknowable.
    sink = await startWebhookSink(() => 30_000);
    served = await ServedHome.start({
      script: [{ content: 'Hello over the webhook.' }],
      webhookUrl: sink.url,
      workLeaseMs: 1_500,
    });
    await served.stop('SIGTERM');
    const [sessionId] = await seedWebhookSessions(served.home.dir, 1);
    await served.restart();
    const ids = await (await served.gateway()).request('operator.submit', { session_id: sessionId, text: 'say hello' });
    expect((await served.turnEnd(ids.turn_id)).type).toBe('turn.completed');
    const queued = await served.reader.waitFor('the webhook delivery', (e) => e.type === 'delivery.queued');
    const { deliveryId, workId } = queued.data as { deliveryId: string; workId: string };
    await served.reader.waitFor('the send', (e) => e.streamId === deliveryId && e.type === 'delivery.sending');
    for (let i = 0; i < 200 && sink.hits.length === 0; i++) await sleep(25);
    expect(sink.hits.map((h) => h.deliveryId)).toEqual([deliveryId]);
    expect((await served.stop('SIGKILL')).signal).toBe('SIGKILL');
    expect(served.types(deliveryId)).toEqual(['delivery.queued', 'delivery.sending']);

    // The next host, started once the dead host's send lease ran out, expires it: unknown, recorded, never
    // sent again. (Work leases are expired by a host's start-up recovery, so the restart waits for it.)
    await sleep(2_000);
    await served.restart();
    const unknown = await served.reader.waitFor(
      'the delivery to become unknown',
      (e) => e.streamId === deliveryId && e.type === 'delivery.unknown',
      { timeoutMs: 20_000 },
    );
    expect(unknown.data.reason).toMatch(/lease expired/);
    expect(served.types(workId).slice(-2)).toEqual(['work.sending', 'work.lease_expired']);
    await sleep(1_000);
    expect(sink.hits).toHaveLength(1);

    // The operator checked the receiver's log: it was sent. One decision settles the work and the delivery.
    const resolved = await demiurgeJson<{ work: { status: string } }>([
      'work',
      'resolve',
      workId,
      '--decision',
      'sent',
      '--note',
      'the receiver logged it',
      '--home',
      served.home.dir,
    ]);
    expect(resolved.work.status).toBe('succeeded');
    // The delivery is resolved in the same commit as its work item, while the host still serves.
    expect(served.types(deliveryId).at(-1)).toBe('delivery.resolved');
    // A restart finds nothing left to reconcile.
    await served.stop('SIGTERM');
    await served.restart();
    expect(served.types(deliveryId)).toEqual([
      'delivery.queued',
      'delivery.sending',
      'delivery.unknown',
      'delivery.resolved',
    ]);
    expect(sink.hits).toHaveLength(1);
    await served.stop('SIGTERM');
    expect(await verifyHome(served.home.dir)).toMatchObject({ ok: true, problems: [] });
    await recordGolden('crash-delivery-unknown', served.home.dir);
  });
});
