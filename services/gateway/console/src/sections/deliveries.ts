import { api, errorText } from '../api.js';
import { h, notice, replace } from '../dom.js';

interface Attempt {
  attempt: number;
  at: string;
  url: string;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

interface Delivery {
  delivery_id: string;
  event_type: string;
  status: string;
  reason: string | null;
  created_at: string;
  attempts: Attempt[];
}

const attemptText = (a: Attempt): string =>
  `#${a.attempt} ${new Date(a.at).toLocaleTimeString()} ${a.outcome}${a.status_code ? ` HTTP ${a.status_code}` : ''}${a.error ? ` ${a.error}` : ''} (${a.duration_ms} ms)`;

/** Webhook deliveries, newest first, each with every attempt, and a redeliver button for failed ones. */
export const deliveriesSection = (id: string) => {
  const list = h('div', { 'aria-live': 'polite' }, notice('Loading deliveries…'));
  const result = h('div', { 'aria-live': 'polite' });

  const redeliver = (deliveryId: string): void => {
    api('/redeliver_webhooks', { instance_id: id, delivery_id: deliveryId }).then(
      () => {
        replace(result, notice(`Redelivery of ${deliveryId} scheduled.`, 'ok'));
        void load();
      },
      (error: unknown) => replace(result, notice(errorText(error), 'error')),
    );
  };

  /** What the list shows now: a poll that reads the same draws nothing (focus and screen readers stay where they are). */
  let shown = '';
  const load = async (): Promise<void> => {
    try {
      const body = await api('/webhook_deliveries', { instance_id: id, limit: 50 });
      const deliveries = body.deliveries as Delivery[];
      const read = JSON.stringify(deliveries);
      if (read === shown) return;
      shown = read;
      if (deliveries.length === 0) return replace(list, notice('No deliveries yet (set a webhook first).', 'empty'));
      // A changed list is drawn anew: the keyboard focus goes back to the button it was on (the list polls every 3 s).
      const focused = document.activeElement instanceof HTMLElement ? document.activeElement.closest('li[data-delivery]')?.getAttribute('data-delivery') : null;
      replace(
        list,
        h(
          'ul',
          { class: 'deliveries' },
          ...deliveries.map((d) =>
            h(
              'li',
              { 'data-delivery': d.delivery_id, 'data-status': d.status },
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
            ),
          ),
        ),
      );
      if (focused) list.querySelector<HTMLElement>(`li[data-delivery="${CSS.escape(focused)}"] button`)?.focus();
    } catch (error) {
      shown = '';
      replace(list, notice(`Could not load the deliveries: ${errorText(error)}`, 'error'));
    }
  };

  let pending: ReturnType<typeof setTimeout> | undefined;
  const element = h(
    'section',
    { class: 'card', 'aria-labelledby': 'dl-heading' },
    h('div', { class: 'toolbar' }, h('h2', { id: 'dl-heading' }, 'Webhook deliveries'), h('button', { type: 'button', onclick: () => void load() }, 'Refresh')),
    result,
    list,
  );
  void load();
  return {
    element,
    /** Deliveries change a moment after each event (attempts, retries): read again shortly after. */
    refresh: (): void => {
      clearTimeout(pending);
      pending = setTimeout(() => void load(), 500);
    },
    stop: (): void => clearTimeout(pending),
  };
};
