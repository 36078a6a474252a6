import { lifecycleFor } from '@demiurge/lifecycle';
import type { Hono } from 'hono';
import { esc, layout, section } from './html.js';
import { DashboardHttpError } from './http-errors.js';
import { lifecycleIndex, lifecycleSection } from './lifecycle-section.js';
import type { DashboardReads } from './read-models.js';
import {
  eventsSection,
  runsSection,
  sessionSection,
  sessionsSection,
  statusSection,
  tasksSection,
  workSection,
} from './sections.js';

/** How many of the latest events the event log page shows. */
const EVENT_LOG_ROWS = 100;

/**
 * The pages (`/`, `/tasks`, `/sessions`, `/sessions/:id`, `/runs`, `/work`, `/events`) and the partials their
 * script re-fetches (`/partials/...`): each section is rendered by one function for both.
 */
export function registerPages(web: Hono, reads: DashboardReads): void {
  const partials: Record<string, { topics: string[]; render: (arg: string) => Promise<string> }> = {
    status: {
      topics: ['*'],
      render: async () =>
        statusSection(
          await reads.status(),
          (await reads.tasks()).filter((t) => t.status === 'blocked'),
        ),
    },
    tasks: { topics: ['task.'], render: async () => tasksSection(await reads.tasks()) },
    sessions: {
      topics: ['session.', 'message.', 'turn.'],
      render: async () => sessionsSection(await reads.sessions()),
    },
    session: { topics: ['*'], render: async (id) => sessionSection(await reads.session(id)) },
    runs: { topics: ['run.', 'turn.'], render: async () => runsSection(await reads.runs()) },
    work: { topics: ['work.', 'delivery.', 'message.'], render: async () => workSection(await reads.work()) },
    events: {
      topics: ['*'],
      render: async (type) => {
        const head = await reads.head();
        return eventsSection(await reads.events(Math.max(1, head - EVENT_LOG_ROWS + 1), type || undefined));
      },
    },
  };
  const page = (path: string, title: string, name: string) =>
    web.get(path, async (c) => {
      const part = partials[name]!;
      const arg = c.req.param('id') ?? c.req.query('type') ?? '';
      const src = `/partials/${name}${arg ? `/${encodeURIComponent(arg)}` : ''}`;
      const filter =
        name === 'events'
          ? `<form><input name="type" placeholder="type prefix, e.g. task." value="${esc(arg)}"><button>filter</button></form>`
          : '';
      return c.html(layout(title, filter + section(name, src, part.topics, await part.render(arg))));
    });
  page('/', 'Operator status', 'status');
  page('/tasks', 'Task board', 'tasks');
  page('/sessions', 'Sessions', 'sessions');
  page('/sessions/:id', 'Session', 'session');
  page('/runs', 'Runs', 'runs');
  page('/work', 'Work items and outbox', 'work');
  page('/events', 'Event log', 'events');
  web.get('/lifecycle', (c) => c.html(layout('Lifecycles', lifecycleIndex())));
  web.get('/lifecycle/:type', (c) => {
    const lifecycle = lifecycleFor(c.req.param('type'));
    if (!lifecycle) throw new DashboardHttpError(404, 'not_found', `no lifecycle "${c.req.param('type')}"`);
    return c.html(layout(`${lifecycle.title} lifecycle`, lifecycleSection(lifecycle, c.req.query('state') ?? '')));
  });
  web.get('/partials/:name/:arg?', async (c) => {
    const part = partials[c.req.param('name')];
    if (!part) return c.notFound();
    return c.html(await part.render(decodeURIComponent(c.req.param('arg') ?? '')));
  });
}
