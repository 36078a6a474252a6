import { finalStates, type Lifecycle, transitionTable } from '@demiurge/lifecycle';
import { esc } from './html.js';

const BOX_W = 150;
const BOX_H = 34;
const GAP_X = 70;
const GAP_Y = 90;
const PAD = 30;
/** Room at the sides for the arrows that go back up around the boxes, and their labels. */
const SIDE = 110;
const LINE = 12;

/** A drawn transition: every event that moves the aggregate from `from` to `to`. */
interface Edge {
  readonly from: string;
  readonly to: string;
  readonly labels: string[];
}

/**
 * The layers of a lifecycle, top to bottom: each state one below the lowest state that leads to it, the
 * transitions that go back (closing a cycle, found depth-first from `none` in the machine's order) left out,
 * so final states sink to the bottom; within a layer, states keep the machine's order, then move toward the
 * mean position of the states that lead to them (one barycentre pass: fewer crossings).
 */
function layers(lifecycle: Lifecycle, edges: readonly Edge[]): string[][] {
  const out = (state: string) => edges.filter((e) => e.from === state).map((e) => e.to);
  const onPath = new Set<string>();
  const done = new Set<string>();
  const back = new Set<string>();
  const finished: string[] = [];
  const visit = (state: string) => {
    onPath.add(state);
    for (const next of out(state)) {
      if (onPath.has(next)) back.add(`${state}>${next}`);
      else if (!done.has(next)) visit(next);
    }
    onPath.delete(state);
    done.add(state);
    finished.push(state);
  };
  for (const state of lifecycle.states) if (!done.has(state)) visit(state);
  const layer = new Map<string, number>();
  for (const state of finished.reverse()) {
    const from = edges.filter((e) => e.to === state && !back.has(`${e.from}>${e.to}`) && layer.has(e.from));
    layer.set(state, Math.max(0, ...from.map((e) => layer.get(e.from)! + 1)));
  }
  const rows: string[][] = [];
  for (const state of lifecycle.states) {
    const at = layer.get(state)!;
    rows[at] = [...(rows[at] ?? []), state];
  }
  const compact = rows.filter((row) => row !== undefined && row.length > 0);
  for (let i = 1; i < compact.length; i++) {
    const above = new Map(compact[i - 1]!.map((s, x) => [s, x]));
    const weight = (state: string) => {
      const xs = edges.filter((e) => e.to === state && above.has(e.from)).map((e) => above.get(e.from)!);
      return xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.POSITIVE_INFINITY;
    };
    const order = new Map(compact[i]!.map((s, x) => [s, x]));
    compact[i]!.sort((a, b) => weight(a) - weight(b) || order.get(a)! - order.get(b)!);
  }
  return compact;
}

/**
 * An aggregate's lifecycle drawn as SVG from its XState machine (the same `transitionTable` docs/lifecycle.md is
 * generated from): each state a box (`none`, before the first event, a dot; final states with a double border),
 * each transition that moves the aggregate a labelled arrow (events that keep the state are listed in the
 * table). `current` is highlighted, with the arrows the machine allows from it.
 * @example
 * lifecycleDiagram(taskLifecycle, 'active'); // '<svg class="lifecycle-diagram" ...'
 */
export function lifecycleDiagram(lifecycle: Lifecycle, current: string): string {
  const edges: Edge[] = [];
  for (const row of transitionTable(lifecycle)) {
    if (row.kind === 'stay') continue;
    const label = row.condition ? `${row.event} (${row.condition})` : row.event;
    const edge = edges.find((e) => e.from === row.from && e.to === row.to);
    if (edge) {
      if (!edge.labels.includes(label)) edge.labels.push(label);
    } else edges.push({ from: row.from, to: row.to, labels: [label] });
  }
  const rows = layers(lifecycle, edges);
  const widest = Math.max(...rows.map((r) => r.length));
  const width = SIDE * 2 + widest * BOX_W + (widest - 1) * GAP_X;
  const height = PAD * 2 + rows.length * BOX_H + (rows.length - 1) * GAP_Y;
  const at = new Map<string, { x: number; y: number; layer: number }>();
  rows.forEach((row, layer) => {
    const rowWidth = row.length * BOX_W + (row.length - 1) * GAP_X;
    row.forEach((state, i) => {
      const x = (width - rowWidth) / 2 + i * (BOX_W + GAP_X) + BOX_W / 2;
      at.set(state, { x, y: PAD + layer * (BOX_H + GAP_Y) + BOX_H / 2, layer });
    });
  });
  const finals = new Set<string>(finalStates(lifecycle));
  const arrows = edges.map((e) => {
    // Labels of the arrows leaving one state sit at staggered distances along them, so they do not pile up.
    const siblings = edges.filter((o) => o.from === e.from);
    const t = 0.25 + (0.4 * siblings.indexOf(e)) / Math.max(1, siblings.length - 1);
    return edgeSvg(e, [at.get(e.from)!, at.get(e.to)!], [...at.values()], e.from === current, [width, t]);
  });
  const boxes = lifecycle.states.map((state) => {
    const { x, y } = at.get(state)!;
    const mark = state === current ? ' current' : '';
    const attrs = `class="state${mark}" data-state="${esc(state)}"${mark ? ' data-current="true"' : ''}`;
    if (state === lifecycle.initialState) {
      return `<g ${attrs}><circle cx="${x}" cy="${y}" r="9"/><text x="${x + 16}" y="${y + 4}" class="none">${esc(state)}</text></g>`;
    }
    const double = finals.has(state)
      ? `<rect x="${x - BOX_W / 2 + 3}" y="${y - BOX_H / 2 + 3}" width="${BOX_W - 6}" height="${BOX_H - 6}" rx="6"/>`
      : '';
    return `<g ${attrs}><rect x="${x - BOX_W / 2}" y="${y - BOX_H / 2}" width="${BOX_W}" height="${BOX_H}" rx="8"/>${double}<text x="${x}" y="${y + 4}">${esc(state)}</text></g>`;
  });
  return `<svg class="lifecycle-diagram" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(lifecycle.title)} lifecycle">
<style>${DIAGRAM_STYLE}</style>
<defs>${marker('arrow', '#667')}${marker('arrow-hot', '#c60')}</defs>
${arrows.join('\n')}
${boxes.join('\n')}
</svg>`;
}

const DIAGRAM_STYLE = `.state rect{fill:#f4f4f8;stroke:#445;stroke-width:1.2}.state circle{fill:#223}
.state text{font:13px system-ui,sans-serif;text-anchor:middle;fill:#111}.state text.none{text-anchor:start;fill:#666}
.state.current rect{fill:#ffe9a8;stroke:#c60;stroke-width:2.5}.edge path{fill:none;stroke:#889;stroke-width:1.2}
.edge text{font:10px ui-monospace,monospace;fill:#335;paint-order:stroke;stroke:#fff;stroke-width:3px}
.edge.hot path{stroke:#c60;stroke-width:2}.edge.hot text{fill:#a40;font-weight:bold}`;

function marker(id: string, color: string): string {
  return `<marker id="${id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="${color}"/></marker>`;
}

type Point = { x: number; y: number; layer: number };

/**
 * One arrow: straight down to a lower layer; an arc over the boxes within a layer; to an upper layer a curve
 * around the side (right of centre to the right, else to the left) so it does not cross the boxes between.
 */
function edgeSvg(
  edge: Edge,
  [from, to]: readonly [Point, Point],
  boxes: readonly Point[],
  hot: boolean,
  [width, t]: readonly [number, number],
): string {
  const half = BOX_H / 2;
  let d: string;
  let label: { x: number; y: number };
  if (to.layer > from.layer) {
    const [x1, y1, x2, y2] = [from.x, from.y + half, to.x, to.y - half];
    // A state between the two layers in the way of a straight arrow: bend around it (on the nearer side).
    const xAt = (y: number) => x1 + ((x2 - x1) * (y - y1)) / (y2 - y1);
    const inTheWay = boxes.filter(
      (b) => b.layer > from.layer && b.layer < to.layer && Math.abs(b.x - xAt(b.y)) < BOX_W / 2 + 8,
    );
    if (inTheWay.length === 0) {
      d = `M${x1},${y1} L${x2},${y2}`;
      label = { x: x1 + (x2 - x1) * t, y: y1 + (y2 - y1) * t };
    } else {
      const right = Math.max(...inTheWay.map((b) => b.x)) + BOX_W / 2 + 25;
      const left = Math.min(...inTheWay.map((b) => b.x)) - BOX_W / 2 - 25;
      const mid = (x1 + x2) / 2;
      const bypass = Math.min(Math.max(Math.abs(right - mid) <= Math.abs(left - mid) ? right : left, 10), width - 10);
      // Both control points at c: the curve passes `bypass` halfway.
      const c = (bypass - (x1 + x2) / 8) / 0.75;
      const points = [x1, y1, c, y1 + (y2 - y1) / 3, c, y1 + (2 * (y2 - y1)) / 3, x2, y2] as const;
      d = `M${points[0]},${points[1]} C${points[2]},${points[3]} ${points[4]},${points[5]} ${points[6]},${points[7]}`;
      label = cubicAt(points, t);
    }
  } else if (to.layer === from.layer) {
    // Within a layer: an arc over the boxes, from the top of one to the top of the other.
    const [x1, x2, y] = [from.x, to.x, from.y - half];
    const lift = y - 30 - Math.abs(x2 - x1) / 8;
    d = `M${x1},${y} C${x1},${lift} ${x2},${lift} ${x2},${y}`;
    label = { x: (x1 + x2) / 2, y: lift + 6 };
  } else {
    const side = from.x >= width / 2 ? 1 : -1;
    const [x1, x2] = [from.x + (side * BOX_W) / 2, to.x + (side * BOX_W) / 2];
    const bulge = Math.max(x1, x2) * (side > 0 ? 1 : 0) + Math.min(x1, x2) * (side < 0 ? 1 : 0) + side * 40;
    const cx = Math.min(Math.max(bulge, 10), width - 10);
    d = `M${x1},${from.y} C${cx},${from.y} ${cx},${to.y} ${x2},${to.y}`;
    label = { x: cx, y: (from.y + to.y) / 2 };
  }
  const lines = edge.labels
    .map(
      (l, i) =>
        `<tspan x="${label.x}" dy="${i === 0 ? -((edge.labels.length - 1) * LINE) / 2 : LINE}">${esc(l)}</tspan>`,
    )
    .join('');
  return `<g class="edge${hot ? ' hot' : ''}" data-from="${esc(edge.from)}" data-to="${esc(edge.to)}"><path d="${d}" marker-end="url(#${hot ? 'arrow-hot' : 'arrow'})"/><text text-anchor="middle" x="${label.x}" y="${label.y}">${lines}</text></g>`;
}

/** The point at `t` of the cubic Bézier `x0,y0 … x3,y3`. */
function cubicAt(p: readonly [number, number, number, number, number, number, number, number], t: number) {
  const u = 1 - t;
  const w = [u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t] as const;
  return {
    x: w[0] * p[0] + w[1] * p[2] + w[2] * p[4] + w[3] * p[6],
    y: w[0] * p[1] + w[1] * p[3] + w[2] * p[5] + w[3] * p[7],
  };
}
