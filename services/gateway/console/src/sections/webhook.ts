import { api, errorText } from '../api.js';
import { field, h, notice, replace } from '../dom.js';
import { filterText } from '../webhookEventTypes.js';

/** Webhook settings; the signing secret is shown once, right after saving, and kept nowhere. */
export const webhookSection = (id: string, onSaved: () => void) => {
  const url = h('input', { type: 'url', placeholder: 'https://example.com/hooks/whatsapp', required: true, maxlength: '2048' });
  const enabled = h('input', { type: 'checkbox', checked: true });
  // Sent with every save: set_webhook without `events` delivers every type, so a form without it dropped a filter.
  const events = h('input', { type: 'text', id: `wh-events-${id}`, placeholder: 'every type', maxlength: '512', spellcheck: 'false' });
  const result = h('div', { 'aria-live': 'polite' });
  /** Changed since the last save: the server's settings (read again on every instance event) no longer overwrite it. */
  let edited = false;
  url.addEventListener('input', () => (edited = true));
  enabled.addEventListener('change', () => (edited = true));
  events.addEventListener('input', () => (edited = true));
  const form = h(
    'form',
    {
      onsubmit: (event: Event) => {
        event.preventDefault();
        replace(result, notice('Saving…'));
        api('/set_webhook', { instance_id: id, webhook_url: url.value, enable: String(enabled.checked), events: events.value.replace(/\s+/g, '') }).then(
          (body) => {
            edited = false;
            replace(
              result,
              notice('Saved.', 'ok'),
              h(
                'div',
                { class: 'secret' },
                h('p', {}, 'Signing secret (verify deliveries with it; it is shown only now):'),
                h('code', { class: 'mono' }, String(body.signing_secret)),
              ),
            );
            onSaved();
          },
          (error: unknown) => replace(result, notice(errorText(error), 'error')),
        );
      },
    },
    field('Webhook URL', url),
    field('Event types', events, 'Comma-separated, e.g. message.received, message.failed; empty: every type'),
    h('div', { class: 'field check' }, enabled, h('label', {}, 'Enabled')),
    h('button', { type: 'submit' }, 'Save webhook'),
    result,
  );
  const checkLabel = form.querySelector('.check label');
  enabled.id = `wh-enabled-${id}`;
  checkLabel?.setAttribute('for', enabled.id);
  const element = h('section', { class: 'card', 'aria-labelledby': 'wh-heading' }, h('h2', { id: 'wh-heading' }, 'Webhook'), form);
  return {
    element,
    settings(webhook: { url: string; enabled: boolean; events?: string[] } | null): void {
      // A half-edited form stays as it is: refilled, its Save would store the old URL (with a new signing secret).
      if (!webhook || edited || [url, enabled, events].some((control) => document.activeElement === control)) return;
      // Switched off elsewhere (by the gateway after its endpoint answered 410 Gone, or by another client). Said, so
      // the unticked box is no surprise, with how to switch it on again.
      if (enabled.checked && !webhook.enabled && url.value === webhook.url) {
        replace(
          result,
          notice('The webhook is off now (its endpoint answered 410 Gone, or it was switched off elsewhere). Tick Enabled and save to switch it on.', 'error'),
        );
      }
      url.value = webhook.url;
      enabled.checked = webhook.enabled;
      events.value = filterText(webhook.events ?? []);
    },
  };
};
