import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLifecycle } from '@demiurge/lifecycle';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demiurgeJson, tempHome } from './cli.js';
import { type DashboardHost, startDashboard, tokenPath } from './dashboard-host.js';
import { killWatched, watchCli, writeHostHome } from './serve-process.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = join(import.meta.dirname, '..', '..', '..', 'docs', 'img');
/** The browser tests run where Debian's Chromium is installed; elsewhere they are skipped and say why. */
const suite = (title: string, body: () => void) =>
  existsSync(CHROMIUM)
    ? describe(title, body)
    : describe.skip(`${title} (skipped: no Chromium at ${CHROMIUM}; install the Debian package "chromium")`, body);

let browser: Browser;
let page: Page;
let home: ReturnType<typeof tempHome>;
let host: DashboardHost | undefined;

suite('the dashboard in a real browser (Chromium, playwright-core)', () => {
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--no-background-networking'],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    home = tempHome();
    page = await browser.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
  });
  afterEach(async () => {
    await page.close();
    killWatched();
    await host?.stop('SIGKILL');
    host = undefined;
    home.remove();
  });

  /** With DASHBOARD_SCREENSHOTS=1, saves the page as docs/img/dashboard-NAME.png (the images in docs/dashboard.md). */
  async function shot(name: string, path?: string) {
    if (process.env.DASHBOARD_SCREENSHOTS !== '1') return;
    if (path) await open(path);
    await page.setViewportSize({ width: 1200, height: 700 });
    await page.screenshot({ path: join(SCREENSHOTS, `dashboard-${name}.png`), fullPage: name !== 'events' });
  }

  /** Opens the login link, then `path`; resolves once the page listens to the event stream. */
  async function open(path: string) {
    await page.goto(host!.login);
    await page.goto(host!.url + path);
    await page.waitForSelector('body[data-live="true"]');
  }

  it('opens with the login link and shows a turn live on the sessions page while it runs', async () => {
    writeHostHome(home.path);
    host = await startDashboard(home.path);
    await open('/sessions');
    expect(await page.textContent('#sessions')).toContain('no sessions');
    await page.evaluate(() => {
      (globalThis as unknown as { marker: number }).marker = 1;
    });
    const run = watchCli(['run', 'hello from the browser test', '--home', home.path]);
    const row = page.locator('#sessions tr', { hasText: '[fake] hello from the browser test' });
    await row.waitFor({ timeout: 20_000 });
    expect((await run.exited).code).toBe(0);
    // The same document, refreshed by the stream: not a reload.
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(1);
    await row.locator('a').click();
    await page.waitForSelector('body[data-live="true"]');
    await expect
      .poll(() => page.locator('.message').allTextContents())
      .toEqual([expect.stringContaining('hello from the browser test'), expect.stringContaining('[fake] hello')]);
    // A message submitted from the session page runs a turn through the gateway's submit; its reply appears live.
    await page.fill('form[data-action] input[name="text"]', 'a second message');
    await page.click('form[data-action] button');
    await page.locator('.message', { hasText: '[fake] a second message' }).waitFor({ timeout: 20_000 });
    expect(await page.locator('.message').count()).toBe(4);
    await shot('session');
    await shot('sessions', '/sessions');
    await shot('runs', '/runs');
    await shot('work', '/work');
    await shot('events', '/events');
  }, 60_000);

  it('cancels a running task from the board and the card moves to the done lane', async () => {
    const ws = writeHostHome(home.path, {
      script: [
        { tool_calls: [{ name: 'shell', arguments: { command: 'sleep 30', background: true } }] },
        { content: 'started it' },
      ],
    });
    host = await startDashboard(home.path, ws);
    await open('/tasks');
    const run = watchCli(['run', 'start a long command', '--home', home.path], { cwd: ws });
    const active = page.locator('[data-lane="active"] .card[data-status="active"]');
    await active.waitFor({ timeout: 20_000 });
    const taskId = await active.getAttribute('data-task-id');
    expect((await run.exited).code).toBe(0);
    await shot('tasks');
    await active.getByRole('button', { name: 'Cancel' }).click();
    const done = page.locator(`[data-lane="done"] .card[data-task-id="${taskId}"]`);
    await done.waitFor({ timeout: 20_000 });
    expect(await done.getAttribute('data-status')).toBe('cancelled');
    expect(await done.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    expect(await page.locator('#flash').textContent()).toBe('done: Cancel');
    const shown = await demiurgeJson<{ task: { status: string } }>(['tasks', 'show', taskId!, '--home', home.path]);
    expect(shown.json.task.status).toBe('cancelled');
    const lifecycle = await done.locator('a.lifecycle').getAttribute('href');
    expect(lifecycle).toBe('/lifecycle/task?state=cancelled');
    // Delete is offered once cancelled: the task leaves the board (kept for audit, hidden).
    await done.getByRole('button', { name: 'Delete' }).click();
    await done.waitFor({ state: 'detached', timeout: 20_000 });
    const deleted = await demiurgeJson<{ task: { status: string } }>(['tasks', 'show', taskId!, '--home', home.path]);
    expect(deleted.json.task.status).toBe('deleted');
    // The task's lifecycle, read from its machine, with the state it was in highlighted.
    await page.goto(host!.url + lifecycle);
    const current = page.locator('tr[data-current="true"]');
    expect(await current.count()).toBe(1);
    expect(await current.textContent()).toMatch(/^▶ cancelled.*task\.deleted → deleted/);
  }, 60_000);

  it('grants an approval from the status page and the write happens', async () => {
    const ws = writeHostHome(home.path, {
      script: [
        { tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'granted in a browser' } }] },
        { content: 'wrote notes.txt' },
      ],
      extra: ['plan_mode:', '  on_write: ask'],
    });
    host = await startDashboard(home.path, ws);
    await open('/');
    const run = watchCli(['run', 'write the notes', '--plan', '--home', home.path], { cwd: ws });
    const grant = page.getByRole('button', { name: 'Grant' });
    await grant.waitFor({ timeout: 20_000 });
    expect(existsSync(join(ws, 'notes.txt'))).toBe(false);
    await shot('status');
    const sessionPage = await page.locator('#status a[href^="/sessions/"]').first().getAttribute('href');
    await grant.click();
    const done = await run.exited;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout.trim()).toBe('wrote notes.txt');
    expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('granted in a browser');
    await page.locator('#status', { hasText: 'no open approvals' }).waitFor();
    // The session page lists the call with its arguments and outcome.
    await page.goto(host!.url + sessionPage);
    const call = page.locator('tr', { hasText: 'write_file' });
    expect(await call.textContent()).toContain('succeeded');
    expect(await call.textContent()).toContain('granted in a browser');
  }, 60_000);

  it('shows a login page to a browser without the token, and draws a lifecycle with its current state highlighted', async () => {
    writeHostHome(home.path);
    host = await startDashboard(home.path);
    const first = await page.goto(`${host.url}/runs`);
    expect(first!.status()).toBe(401);
    await page.waitForSelector('form#login');
    expect(await page.textContent('main')).toContain(tokenPath(home.path));
    await shot('login');
    // The API stays JSON 401.
    const api = await page.request.get(`${host.url}/api/status`);
    expect(api.status()).toBe(401);
    expect(await api.json()).toMatchObject({ error: { code: 'unauthorized' } });
    // A wrong token is refused on the page; the pasted right one logs in and comes back to the page asked for.
    await page.fill('input[name="token"]', 'not-the-token');
    await page.click('form#login button');
    expect(await page.textContent('#login-error')).toContain('That token is wrong');
    await page.fill('input[name="token"]', host.token);
    await page.click('form#login button');
    await page.waitForURL(`${host.url}/runs`);
    await page.waitForSelector('body[data-live="true"]');
    expect(await page.textContent('h1')).toBe('Runs');

    // The run lifecycle drawn from its machine: a box per state, the current one highlighted with the arrows
    // the machine allows from it.
    await page.goto(`${host.url}/lifecycle/run?state=paused`);
    const diagram = page.locator('svg.lifecycle-diagram');
    expect(await diagram.locator('g.state').count()).toBe(runLifecycle.states.length);
    const current = diagram.locator('g.state[data-current="true"]');
    expect(await current.getAttribute('data-state')).toBe('paused');
    const fill = await current
      .locator('rect')
      .first()
      .evaluate(
        (r) => (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle(r).fill,
      );
    expect(fill).toBe('rgb(255, 233, 168)');
    const hot = (await diagram.locator('g.edge.hot text').allTextContents()).join(' ');
    for (const event of ['run.resumed', 'run.cancel_requested']) expect(hot).toContain(event);
    // Laid out apart: no two state boxes overlap on the page.
    type Box = { left: number; right: number; top: number; bottom: number };
    const boxes = await diagram.locator('g.state').evaluateAll((gs) =>
      gs.map((g) => {
        const { left, right, top, bottom } = (g as unknown as { getBoundingClientRect(): Box }).getBoundingClientRect();
        return { left, right, top, bottom };
      }),
    );
    for (const [i, a] of boxes.entries()) {
      for (const b of boxes.slice(i + 1)) {
        const apart = a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
        expect(apart).toBe(true);
      }
    }
    await shot('lifecycle');
  }, 60_000);
});
