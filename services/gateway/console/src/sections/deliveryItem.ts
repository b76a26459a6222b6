import { h } from '../dom.js';

export interface Attempt {
  attempt: number;
  at: string;
  url: string;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface Delivery {
  delivery_id: string;
  event_type: string;
  status: string;
  reason: string | null;
  created_at: string;
  attempts: Attempt[];
}

const attemptText = (a: Attempt): string =>
  `#${a.attempt} ${new Date(a.at).toLocaleTimeString()} ${a.outcome}${a.status_code ? ` HTTP ${a.status_code}` : ''}${a.error ? ` ${a.error}` : ''} (${a.duration_ms} ms)`;

/**
 * One delivery with its attempts, and "Redeliver" when it is dead. The row takes the focus by script (tabindex -1):
 * after "Show older" the focus goes to the first delivery it brought.
 */
export const deliveryItem = (d: Delivery, redeliver: (deliveryId: string) => void): HTMLElement =>
  h(
    'li',
    { 'data-delivery': d.delivery_id, 'data-status': d.status, tabindex: '-1' },
    h(
      'div',
      { class: 'row' },
      h('span', { class: 'mono' }, d.delivery_id),
      h('span', {}, d.event_type),
      h('span', { class: `badge status-${d.status}` }, d.status),
      d.reason ? h('span', {}, d.reason) : null,
      d.status === 'dead'
        ? h('button', { type: 'button', onclick: () => redeliver(d.delivery_id), 'aria-label': `Redeliver ${d.delivery_id}` }, 'Redeliver')
        : null,
    ),
    h('ol', { class: 'attempts' }, ...d.attempts.map((a) => h('li', {}, attemptText(a)))),
  );
