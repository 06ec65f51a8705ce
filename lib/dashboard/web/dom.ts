/// <reference lib="dom" />
/* Small DOM helpers: elements by tag, attributes and children; a panel with its favourite star. */
import { favourites, store } from './settings';

/** Where the views draw. */
export const app = document.getElementById('app')!;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: (Node | string | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') el.className = String(v);
    else el.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}

export function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/** A panel: its title, subtitle and a star that makes it a favourite (shown first), then its body. */
export function panelBox(
  id: string,
  title: string,
  subtitle: string,
  ...body: (Node | string)[]
): HTMLElement {
  const star = h('button', { class: 'star', title: 'favourite: show first' }, favourites.has(id) ? '★' : '☆');
  star.addEventListener('click', () => {
    if (favourites.has(id)) favourites.delete(id);
    else favourites.add(id);
    store.set('favourites', JSON.stringify([...favourites]));
    star.textContent = favourites.has(id) ? '★' : '☆';
  });
  return h(
    'section',
    { class: `panel${favourites.has(id) ? ' fav' : ''}`, 'data-panel': id },
    h('header', {}, h('div', {}, h('h2', {}, title), h('div', { class: 'sub' }, subtitle)), star),
    ...body,
  );
}
