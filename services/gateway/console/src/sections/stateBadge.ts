import { h } from '../dom.js';

/**
 * What a person reads for each state the API answers (an enum such as logged_out is no label); the CSS gives each its
 * own colours (console.css, .state-*). A state this console does not know yet is shown as the API names it.
 */
const STATE_LABELS: ReadonlyMap<string, string> = new Map([
  ['created', 'Not linked'],
  ['connecting', 'Connecting…'],
  ['qr', 'Waiting for scan'],
  ['connected', 'Connected'],
  ['disconnected', 'Disconnected'],
  ['logged_out', 'Logged out'],
  ['failed', 'Failed'],
]);

export const stateBadge = (state: string): HTMLElement => {
  const label = STATE_LABELS.get(state);
  return label ? h('span', { class: `badge state-${state}` }, label) : h('span', { class: 'badge state-unknown' }, state);
};
