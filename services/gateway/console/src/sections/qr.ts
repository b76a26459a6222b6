import { api, ApiError, errorText } from '../api.js';
import { field, h, notice, replace } from '../dom.js';

/** How often a shown QR code is fetched again while the instance is not linked (codes expire). */
const QR_REFRESH_MS = 15_000;

let sandboxKnown: Promise<boolean> | null = null;
/** Whether the gateway runs the sandbox connector: its OpenAPI document lists the sandbox routes then. */
const sandboxEnabled = (): Promise<boolean> =>
  (sandboxKnown ??= fetch('/v1/openapi.json')
    .then((r) => r.json() as Promise<{ paths?: Record<string, unknown> }>)
    .then((doc) => Boolean(doc.paths?.['/sandbox/scan']))
    .catch(() => false));

/**
 * Linking: the QR code, shown and refreshed until the phone links; in sandbox mode, "Simulate scan". `onFirstCode` is
 * called when a code is shown where none was: asking for it moved the instance to qr (or connecting), which no live
 * event says, so the page reads the status again (its badge said "Not linked" beside the code).
 */
export const qrSection = (id: string, onFirstCode: () => void) => {
  const area = h('div', { 'aria-live': 'polite' });
  const scan = h('div');
  const element = h('section', { class: 'card', 'aria-labelledby': 'qr-heading' }, h('h2', { id: 'qr-heading' }, 'Link a phone'), area, scan);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let linked = false;
  /** The page was left: a get_qrcode still under way sets no new timer (it would poll for good, and sign-out's form). */
  let stopped = false;

  const scanForm = (): HTMLElement => {
    const number = h('input', { type: 'text', inputmode: 'numeric', pattern: '[0-9]{7,15}', value: '4915112345678', required: true });
    const result = h('div', { 'aria-live': 'polite' });
    return h(
      'form',
      {
        class: 'inline',
        onsubmit: (event: Event) => {
          event.preventDefault();
          replace(result, notice('Scanning…'));
          api('/sandbox/scan', { instance_id: id, number: number.value }).then(
            () => replace(result, notice('Scanned; linking…', 'ok')),
            (error: unknown) => {
              replace(result, notice(errorText(error), 'error'));
              // The connection that showed the code ended (expired, or a restart): a fresh code to scan again.
              if (error instanceof ApiError && error.code === 'no_qr_waiting') void show();
            },
          );
        },
      },
      field('Phone number (sandbox)', number),
      h('button', { type: 'submit' }, 'Simulate scan'),
      result,
    );
  };

  const show = async (): Promise<void> => {
    clearTimeout(timer);
    if (linked || stopped) return;
    try {
      const body = await api('/get_qrcode', { instance_id: id });
      if (linked || stopped) return;
      const first = area.querySelector('img.qr') === null;
      const img = h('img', { src: String(body.qrcode), alt: 'QR code to scan with WhatsApp on the phone', width: '256', height: '256', class: 'qr' });
      replace(area, h('p', {}, 'On the phone: WhatsApp → Linked devices → Link a device, then scan:'), img);
      if (scan.childElementCount === 0 && (await sandboxEnabled())) replace(scan, scanForm());
      timer = setTimeout(() => void show(), QR_REFRESH_MS);
      if (first) onFirstCode();
    } catch (error) {
      if (stopped) return;
      replace(area, notice(`No QR code: ${errorText(error)}`, 'error'), h('button', { type: 'button', onclick: () => void show() }, 'Try again'));
    }
  };

  return {
    element,
    /** Follows the instance's state: the QR area while not linked, a short note once connected. */
    state(state: string): void {
      const nowLinked = state === 'connected' || state === 'disconnected';
      if (nowLinked) {
        linked = true;
        clearTimeout(timer);
        replace(area, notice(state === 'connected' ? 'Linked and connected.' : 'Linked; reconnecting.', 'ok'));
        scan.replaceChildren();
      } else if (linked || area.childElementCount === 0) {
        linked = false;
        replace(area, notice('Fetching a QR code…'));
        void show();
      }
    },
    stop: (): void => {
      stopped = true;
      clearTimeout(timer);
    },
  };
};
