/// <reference lib="dom" />
/*
 * The pipeline timeline: lanes of spans (merged to pixels by the server) on a canvas, a hover naming
 * the bar under the pointer, a window of the last steps, and drag to zoom into seconds.
 */
import type { TimelineAnswer } from '../data';
import { REPORT_WIDTH, TIMELINE_WINDOWS, urls } from '../urls';
import { PHASE_COLORS } from './charts';
import { api, inline, probe } from './client';
import { cssVar, h, panelBox } from './dom';
import { fmt } from './format';

/** Where the timeline's time axis starts on its canvas (lane names to the left), and its right margin. */
const TIMELINE_LABEL_W = 190;
const TIMELINE_MARGIN = 8;

/** The seconds under pixel `px` of a timeline drawn over [from, to] on a canvas `width` wide. */
function timelineSecondsAt(px: number, width: number, from: number, to: number): number {
  const f = (px - TIMELINE_LABEL_W) / (width - TIMELINE_LABEL_W - TIMELINE_MARGIN);
  return from + Math.min(1, Math.max(0, f)) * (to - from);
}

const TIMELINE_ROW_H = 14;
/** The timeline each canvas shows (what a hover looks up). */
const drawnTimelines = new WeakMap<HTMLCanvasElement, TimelineAnswer>();

/** The bar under (px, py) of the timeline drawn on `canvas`, described; undefined over none. */
function timelineBarAt(canvas: HTMLCanvasElement, px: number, py: number): string | undefined {
  const t = drawnTimelines.get(canvas);
  if (!t || px < TIMELINE_LABEL_W) return undefined;
  const lane = t.lanes[Math.floor(py / TIMELINE_ROW_H)];
  if (!lane) return undefined;
  const w = canvas.clientWidth;
  const at = timelineSecondsAt(px, w, t.from, t.to);
  const slack = timelineSecondsAt(px + 2, w, t.from, t.to) - at; // bars are at least a pixel wide
  for (let k = 0; k < lane.bars.length; k += 3) {
    const [a, b, n] = [lane.bars[k], lane.bars[k + 1], lane.bars[k + 2]];
    if (at >= a - slack && at <= b + slack)
      return `${lane.lane}: ${fmt(a, 6)}–${fmt(b, 6)} s (${fmt(b - a, 3)} s${n > 1 ? `, ${n} spans merged at this zoom` : ''})`;
  }
  return undefined;
}

/** Pipeline timeline: lanes of spans (merged to pixels) on a canvas. */
export function drawTimeline(canvas: HTMLCanvasElement, t: TimelineAnswer): void {
  drawnTimelines.set(canvas, t);
  const lanes = t.lanes;
  const rowH = TIMELINE_ROW_H;
  const labelW = TIMELINE_LABEL_W;
  const width = canvas.clientWidth || 1000;
  const ratio = window.devicePixelRatio || 1;
  canvas.width = width * ratio;
  canvas.height = (lanes.length * rowH + 24) * ratio;
  canvas.style.height = `${lanes.length * rowH + 24}px`;
  const g = canvas.getContext('2d')!;
  g.scale(ratio, ratio);
  g.font = '11px system-ui, sans-serif';
  g.fillStyle = cssVar('--fg');
  const x = (v: number): number =>
    labelW + ((v - t.from) / (t.to - t.from || 1)) * (width - labelW - TIMELINE_MARGIN);
  lanes.forEach((l, i) => {
    const y = i * rowH;
    g.fillStyle = cssVar('--fg');
    g.fillText(l.lane.slice(0, 30), 4, y + 11);
    g.fillStyle = PHASE_COLORS[l.phase] ?? '#888';
    for (let k = 0; k < l.bars.length; k += 3) {
      const a = x(l.bars[k]);
      g.fillRect(a, y + 2, Math.max(1, x(l.bars[k + 1]) - a), rowH - 4);
    }
  });
  g.fillStyle = cssVar('--muted');
  g.fillText(`${fmt(t.from, 5)} s`, labelW, lanes.length * rowH + 16);
  const end = `${fmt(t.to, 5)} s`;
  g.fillText(end, width - TIMELINE_MARGIN - g.measureText(end).width, lanes.length * rowH + 16);
  probe.timeline = { from: t.from, to: t.to };
  probe.charts.push({
    id: 'timeline',
    series: lanes.length,
    points: lanes.reduce((a, l) => a + l.bars.length / 3, 0),
  });
}

/** Hovering a bar names its lane, its seconds and how long it took (not while dragging). */
function addHover(canvas: HTMLCanvasElement, tip: HTMLElement, selection: HTMLElement): void {
  canvas.addEventListener('pointermove', (e) => {
    const r = canvas.getBoundingClientRect();
    if (!selection.hidden) {
      tip.hidden = true; // dragging
      return;
    }
    const text = timelineBarAt(canvas, e.clientX - r.left, e.clientY - r.top);
    tip.hidden = text === undefined;
    if (text === undefined) return;
    tip.textContent = text;
    tip.style.left = `${Math.min(e.clientX - r.left + 12, Math.max(0, r.width - 420))}px`;
    tip.style.top = `${e.clientY - r.top + 14}px`;
  });
  canvas.addEventListener('pointerleave', () => (tip.hidden = true));
}

/** Drag across the canvas to zoom into those seconds (`zoomTo`); a double click goes back (`unzoom`). */
function addDragZoom(
  canvas: HTMLCanvasElement,
  selection: HTMLElement,
  zoomTo: (range: { from: number; to: number }) => void,
  unzoom: () => void,
): void {
  let startPx: number | undefined;
  const pxOf = (e: MouseEvent): number => e.clientX - canvas.getBoundingClientRect().left;
  // the pointer is captured while dragging: moves and the release come here even off the canvas
  canvas.addEventListener('pointerdown', (e) => {
    startPx = Math.max(TIMELINE_LABEL_W, pxOf(e));
    canvas.setPointerCapture(e.pointerId);
    e.preventDefault();
  });
  canvas.addEventListener('pointermove', (e) => {
    if (startPx === undefined) return;
    const px = Math.max(TIMELINE_LABEL_W, Math.min(canvas.clientWidth, pxOf(e)));
    selection.hidden = false;
    selection.style.left = `${Math.min(startPx, px)}px`;
    selection.style.width = `${Math.abs(px - startPx)}px`;
  });
  canvas.addEventListener('pointerup', (e) => {
    if (startPx === undefined) return;
    const [a, b] = [startPx, pxOf(e)].sort((p, q) => p - q);
    startPx = undefined;
    selection.hidden = true;
    const shown = drawnTimelines.get(canvas);
    if (b - a < 4 || !shown) return;
    const w = canvas.clientWidth;
    zoomTo({
      from: timelineSecondsAt(a, w, shown.from, shown.to),
      to: timelineSecondsAt(b, w, shown.from, shown.to),
    });
  });
  canvas.addEventListener('dblclick', unzoom);
}

/** The run view's timeline panel: the canvas, its controls, and the step breakdown's chart below. */
export interface TimelinePanel {
  readonly panel: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  readonly breakdownBox: HTMLElement;
  /** The URL of the timeline as now chosen (window, zoom). */
  readonly url: () => string;
}

export function timelinePanel(id: string): TimelinePanel {
  const canvas = h('canvas', { class: 'timeline' });
  const windowSel = h(
    'select',
    { 'aria-label': 'timeline window' },
    ...TIMELINE_WINDOWS.map((w, i) =>
      h('option', { value: String(i) }, w === undefined ? 'whole run' : `last ${w} steps`),
    ),
  );
  windowSel.value = '2'; // the last 10 steps: a long run's whole timeline is a blur
  const timelineWidth = (): number => (inline ? REPORT_WIDTH : Math.max(400, canvas.clientWidth || 1000));
  // Drag across the timeline to zoom into those seconds (asked of the server at the pixels drawn);
  // a double click or another window goes back. A report holds the windows only.
  let zoom: { from: number; to: number } | undefined;
  const url = (): string =>
    urls.timeline(id, timelineWidth(), TIMELINE_WINDOWS[Number(windowSel.value)], zoom);
  const unzoomBtn = h('button', { class: 'unzoom', hidden: true }, 'reset zoom');
  const redraw = async (): Promise<void> => {
    unzoomBtn.hidden = !zoom;
    const t = await api<TimelineAnswer>(url());
    probe.charts = probe.charts.filter((c) => c.id !== 'timeline');
    drawTimeline(canvas, t);
  };
  windowSel.addEventListener('change', () => {
    zoom = undefined;
    void redraw();
  });
  unzoomBtn.addEventListener('click', () => {
    zoom = undefined;
    void redraw();
  });
  const selection = h('div', { class: 'tl-select', hidden: true });
  const tip = h('div', { class: 'tl-tip', hidden: true });
  addHover(canvas, tip, selection);
  if (!inline)
    addDragZoom(
      canvas,
      selection,
      (range) => {
        zoom = range;
        void redraw();
      },
      () => {
        if (!zoom) return;
        zoom = undefined;
        void redraw();
      },
    );
  const breakdownBox = h('div', { class: 'chart' });
  const panel = panelBox(
    'timeline',
    'Pipeline timeline',
    `spans per lane (generation, verify, reference, training, sync), merged to pixels${inline ? '' : '; drag to zoom, double-click to go back'}; below: where each step’s time went and how long GPUs sat idle`,
    h('div', { class: 'controls' }, windowSel, unzoomBtn),
    h('div', { class: 'tl-wrap' }, canvas, selection, tip),
    breakdownBox,
  );
  return { panel, canvas, breakdownBox, url };
}
