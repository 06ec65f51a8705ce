/// <reference lib="dom" />
/* Settings kept in the browser: theme, axis, smoothing, favourites. */

export const store = {
  get: (k: string, d: string): string => {
    try {
      return localStorage.getItem(`rlvr.${k}`) ?? d;
    } catch {
      return d;
    }
  },
  set: (k: string, v: string): void => {
    try {
      localStorage.setItem(`rlvr.${k}`, v);
    } catch {
      // a report opened from a file may have no storage
    }
  },
};

const prefersDark = window.matchMedia?.('(prefers-color-scheme: dark)').matches;

/** The current choices (the toolbar changes them). */
export const settings = {
  theme: store.get('theme', prefersDark ? 'dark' : 'light'),
  axis: store.get('axis', 'step') as 'step' | 'time',
  smoothing: Number(store.get('smoothing', '0')),
};

/** Favourite panels (shown first in a run view) and favourite runs (first in the jobs view). */
export const favourites = new Set<string>(JSON.parse(store.get('favourites', '[]')) as string[]);
export const favouriteRuns = new Set<string>(JSON.parse(store.get('favouriteRuns', '[]')) as string[]);
document.documentElement.dataset.theme = settings.theme;
