import { api, errorText } from '../api.js';
import { h, notice, replace } from '../dom.js';
import { followEvents } from '../liveEvents.js';
import { deliveriesSection } from '../sections/deliveries.js';
import { qrSection } from '../sections/qr.js';
import { sendSection } from '../sections/send.js';
import { timelineSection } from '../sections/timeline.js';
import { webhookSection } from '../sections/webhook.js';
import { liveBadge, stateBadge } from './instances.js';

/** Deliveries also change without a new event (retries); they are read again this often. */
const DELIVERIES_POLL_MS = 3_000;

/** One instance: status and actions, linking, webhook, send, live timeline and deliveries. Answers a stop function. */
export const instancePage = (root: HTMLElement, id: string, signOut: () => void): (() => void) => {
  const status = h('dl', { class: 'status' });
  const actionResult = h('div', { 'aria-live': 'polite' });
  const live = liveBadge();
  const qr = qrSection(id);
  const deliveries = deliveriesSection(id);
  const timeline = timelineSection(id);
  const loadStatus = async (): Promise<void> => {
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
      );
      qr.state(state);
      webhook.settings(body.webhook as { url: string; enabled: boolean } | null);
    } catch (error) {
      replace(status, notice(`Could not load the status: ${errorText(error)}`, 'error'));
    }
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
    sendSection(id),
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
  return () => {
    stopEvents();
    clearInterval(poll);
    qr.stop();
    deliveries.stop();
  };
};
