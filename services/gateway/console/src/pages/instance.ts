import { api, ApiError, errorText } from '../api.js';
import { h, notice, replace } from '../dom.js';
import { followEvents } from '../liveEvents.js';
import { deliveriesSection } from '../sections/deliveries.js';
import { qrSection } from '../sections/qr.js';
import { sendSection } from '../sections/send.js';
import { timelineSection } from '../sections/timeline.js';
import { webhookSection } from '../sections/webhook.js';
import { stateBadge } from '../sections/stateBadge.js';
import { liveBadge } from './instances.js';

/** Deliveries also change without a new event (retries); they are read again this often. */
const DELIVERIES_POLL_MS = 3_000;
/** A status that could not be read for a passing reason (429, 503, the network) is read again after this. */
const STATUS_RETRY_MS = 5_000;

/** Whether a failed call is worth repeating by itself: rate limited, a dependency down, the gateway unreachable. */
const passing = (error: unknown): boolean => error instanceof ApiError && (error.status === 0 || error.status === 429 || error.status >= 500);

/** One instance: status and actions, linking, webhook, send, live timeline and deliveries. Answers a stop function. */
export const instancePage = (root: HTMLElement, id: string, signOut: (error: ApiError) => void): (() => void) => {
  const status = h('dl', { class: 'status' });
  const actionResult = h('div', { 'aria-live': 'polite' });
  const live = liveBadge();
  const qr = qrSection(id, () => void loadStatus());
  // A delivery answered 410 Gone switched the webhook off, which no live event says: the status (its webhook
  // settings) is read again, so the form shows the server's state.
  const deliveries = deliveriesSection(id, () => void loadStatus());
  const timeline = timelineSection(id);
  let stopped = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let stopAll = (): void => undefined;
  const loadStatus = async (): Promise<void> => {
    clearTimeout(retry);
    try {
      const body = await api('/status', { instance_id: id });
      const state = String(body.state);
      replace(
        status,
        h('dt', {}, 'State'),
        h('dd', { 'data-state': state }, stateBadge(state)),
        h('dt', {}, 'Linked number'),
        h('dd', {}, (body.linked_number as string | null) ?? '—'),
        h('dt', {}, 'Since'),
        h('dd', {}, new Date(String(body.state_since)).toLocaleString()),
        typeof body.last_disconnect_reason === 'string' ? h('dt', {}, 'Last disconnect') : null,
        typeof body.last_disconnect_reason === 'string' ? h('dd', {}, body.last_disconnect_reason) : null,
        ...restrictionRows(body.restricted),
      );
      qr.state(state);
      webhook.settings(body.webhook as { url: string; enabled: boolean; events: string[] } | null);
    } catch (error) {
      if (stopped) return;
      // Unknown, or another account's: nothing on this page can work, so nothing polls or follows it any more.
      if (error instanceof ApiError && error.status === 404) return notFound();
      replace(status, notice(`Could not load the status: ${errorText(error)}`, 'error'));
      // The page would otherwise keep the error (and no QR section) until the next instance event.
      if (passing(error)) retry = setTimeout(() => void loadStatus(), STATUS_RETRY_MS);
    }
  };
  const notFound = (): void => {
    stopAll();
    replace(
      root,
      h('h1', {}, 'Instance not found'),
      notice(`No instance ${id} in this account.`, 'error'),
      h('p', {}, h('a', { href: '#/instances' }, 'Back to the instances')),
    );
  };
  const webhook = webhookSection(id, () => void loadStatus());
  const action = (path: string, done: string): void => {
    replace(actionResult, notice('Working…'));
    api(path, { instance_id: id }).then(
      () => {
        replace(actionResult, notice(done, 'ok'));
        void loadStatus();
      },
      (error: unknown) => replace(actionResult, notice(errorText(error), 'error')),
    );
  };
  const reset = (): void => {
    if (window.confirm('Reset this instance? The phone is unlinked and pending sends are dropped; the history stays.')) action('/reset_instance', 'Reset.');
  };

  replace(
    root,
    h('div', { class: 'toolbar' }, h('h1', {}, 'Instance ', h('span', { class: 'mono' }, id)), live.element),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'st-heading' },
      h('h2', { id: 'st-heading' }, 'Status'),
      status,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', onclick: () => action('/reconnect', 'Reconnecting.') }, 'Reconnect'),
        h('button', { type: 'button', class: 'danger', onclick: reset }, 'Reset…'),
      ),
      actionResult,
    ),
    qr.element,
    sendSection(id, timeline.refresh),
    timeline.element,
    webhook.element,
    deliveries.element,
  );
  void loadStatus();
  const poll = setInterval(deliveries.refresh, DELIVERIES_POLL_MS);
  const stopEvents = followEvents(
    { instance_id: id },
    (event) => {
      if (event.type.startsWith('instance.')) void loadStatus();
      timeline.refresh();
      deliveries.refresh();
    },
    live.set,
    signOut,
  );
  stopAll = () => {
    stopped = true;
    clearTimeout(retry);
    stopEvents();
    clearInterval(poll);
    qr.stop();
    deliveries.stop();
  };
  return () => stopAll();
};

/** While WhatsApp restricts the account's sends (`status.restricted`), why sends wait and until when: nothing otherwise. */
const restrictionRows = (restricted: unknown): HTMLElement[] => {
  if (typeof restricted !== 'object' || restricted === null) return [];
  const until = (restricted as { until?: unknown }).until;
  const end = typeof until === 'string' ? `until ${new Date(until).toLocaleString()}` : 'WhatsApp named no end; one send probes it now and then';
  return [
    h('dt', {}, 'Sends wait'),
    h('dd', { 'data-restricted': 'true' }, `WhatsApp restricts this account's sends (${end}); they are queued and go out after`),
  ];
};
