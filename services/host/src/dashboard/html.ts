/** Escapes text for HTML content and attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/** A table of `rows` with `columns` (heading, cell as HTML). */
export function table<T>(rows: readonly T[], columns: readonly [string, (row: T) => string][], empty = 'none'): string {
  if (rows.length === 0) return `<p class="empty">${esc(empty)}</p>`;
  const head = columns.map(([h]) => `<th>${esc(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${columns.map(([, cell]) => `<td>${cell(r)}</td>`).join('')}</tr>`).join('');
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** A button that POSTs to `action` (the page script sends it with the session cookie). */
export function actionButton(label: string, action: string, confirm?: string, body: object = {}): string {
  const extra = `${confirm ? ` data-confirm="${esc(confirm)}"` : ''} data-body="${esc(JSON.stringify(body))}"`;
  return `<button data-action="${esc(action)}"${extra}>${esc(label)}</button>`;
}

/** A one-field form that POSTs `{ [field]: value }` to `action`. */
export function actionForm(action: string, field: string, label: string): string {
  return `<form data-action="${esc(action)}" data-field="${esc(field)}"><input name="${esc(field)}" placeholder="${esc(label)}" required><button>${esc(label)}</button></form>`;
}

/** The pages of the dashboard, in navigation order. */
export const PAGES = [
  ['/', 'Status'],
  ['/tasks', 'Tasks'],
  ['/sessions', 'Sessions'],
  ['/runs', 'Runs'],
  ['/work', 'Work & outbox'],
  ['/events', 'Events'],
  ['/lifecycle', 'Lifecycles'],
] as const;

/**
 * The script of every page: listens to `/api/stream` (server-sent events) and re-fetches each section whose
 * `data-topics` prefixes match the event type (`*` matches all); buttons with `data-action` POST to the API.
 */
const SCRIPT = `
const sections = [...document.querySelectorAll('[data-section]')];
const dirty = new Set(); let timer;
async function refresh() {
  const now = [...dirty]; dirty.clear();
  for (const s of now) {
    const r = await fetch(s.dataset.section, { credentials: 'same-origin' });
    if (r.ok) s.innerHTML = await r.text();
  }
  document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
}
const stream = new EventSource('/api/stream');
stream.onopen = () => { document.body.dataset.live = 'true'; };
stream.onerror = () => { document.body.dataset.live = 'false'; };
stream.addEventListener('event', (m) => {
  const e = JSON.parse(m.data);
  document.body.dataset.head = String(e.position);
  for (const s of sections) {
    const topics = s.dataset.topics.split(' ');
    if (topics.some((t) => t === '*' || e.type.startsWith(t))) dirty.add(s);
  }
  clearTimeout(timer); timer = setTimeout(refresh, 100);
});
async function act(action, body, label) {
  const r = await fetch(action, { method: 'POST', credentials: 'same-origin',
    headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = await r.json().catch(() => ({}));
  const flash = document.getElementById('flash');
  flash.textContent = r.ok ? 'done: ' + label : 'refused: ' + (answer.error?.message ?? r.status);
  flash.className = r.ok ? 'ok' : 'error';
  return r.ok;
}
document.addEventListener('click', async (ev) => {
  const b = ev.target.closest('button[data-action]');
  if (!b) return;
  if (b.dataset.confirm && !confirm(b.dataset.confirm)) return;
  b.disabled = true;
  await act(b.dataset.action, JSON.parse(b.dataset.body || '{}'), b.textContent);
  b.disabled = false;
});
document.addEventListener('submit', async (ev) => {
  const f = ev.target.closest('form[data-action]');
  if (!f) return;
  ev.preventDefault();
  const input = f.elements[f.dataset.field];
  if (await act(f.dataset.action, { [f.dataset.field]: input.value }, f.dataset.field)) input.value = '';
});
`;

const STYLE = `body{font:14px system-ui,sans-serif;margin:0;color:#222}nav{background:#223;padding:.5em 1em}
nav a{color:#fff;margin-right:1em;text-decoration:none}main{padding:1em}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
.lanes{display:grid;grid-template-columns:repeat(4,1fr);gap:1em}.lane{background:#f4f4f8;padding:.5em}
.card{background:#fff;border:1px solid #ccd;margin:.5em 0;padding:.5em}pre{white-space:pre-wrap;margin:0;font-size:12px}
.current{background:#ffe9a8}.error{color:#a00}.ok{color:#070}.empty{color:#888}.diagram{overflow-x:auto}`;

/** A whole page: navigation, a flash line, `body`, the live script. */
export function layout(title: string, body: string): string {
  const nav = PAGES.map(([href, label]) => `<a href="${href}">${esc(label)}</a>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · demiurge</title>
<style>${STYLE}</style></head><body><nav>${nav}</nav><main><h1>${esc(title)}</h1><p id="flash"></p>${body}</main>
<script type="module">${SCRIPT}</script></body></html>`;
}

/** A live section: its HTML now, re-fetched from `src` when an event whose type starts with a topic commits. */
export function section(id: string, src: string, topics: readonly string[], html: string): string {
  return `<section id="${esc(id)}" data-section="${esc(src)}" data-topics="${esc(topics.join(' '))}">${html}</section>`;
}
