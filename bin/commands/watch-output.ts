import type { WatchEvent } from '../../lib/jobs';
import { formatTime } from './common';

export function renderWatchEvent(event: WatchEvent): string {
  switch (event.type) {
    case 'line':
      return `${formatTime(new Date(event.timestamp))} [${event.host}] ${event.message.replace(/\n$/, '')}`;
    case 'waiting':
      return `… ${event.message}`;
    case 'status':
      return `${formatTime(event.time)} == ${event.secondary}${event.message ? `: ${event.message}` : ''}`;
  }
}
