import { api, ApiError, token, tokenInstance } from '../api.js';
import { field, h, notice, replace } from '../dom.js';
import { refusalText } from '../refusals.js';

/** Sign in by pasting a token; it is checked with one call and kept in session storage only. */
export const signInPage = (root: HTMLElement, onSignedIn: () => void, reason?: string): void => {
  const input = h('input', { type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, name: 'token' });
  const status = h('div', { 'aria-live': 'polite' }, reason ? notice(reason, 'error') : null);
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: (event: Event) => {
        event.preventDefault();
        token.set(input.value.trim());
        replace(status, notice('Checking the token…'));
        // An instance token (one instance handed to one app) cannot list instances: it is checked on its instance.
        const instance = tokenInstance();
        // A refused token is answered here, on this form, with why (not by the console's sign-out on any 401, which
        // drew a new form with one wording for every cause).
        const check = instance
          ? api('/status', { instance_id: instance }, {}, { signOutOn401: false })
          : api('/list_instances', {}, {}, { signOutOn401: false });
        check.then(
          () => onSignedIn(),
          (error: unknown) => {
            // The token was taken, only not for this call: an instance token without the read scope (send only, say)
            // signs in, and what its scopes do not allow answers insufficient_scope where it is used.
            if (error instanceof ApiError && error.code === 'insufficient_scope') return onSignedIn();
            token.clear();
            replace(status, notice(refusalText(error), 'error'));
          },
        );
      },
    },
    h('h1', {}, 'Sign in'),
    h('p', {}, 'Paste an API token (printed by npm start, or made with npm run token). It stays in this tab only.'),
    field('API token', input),
    h('button', { type: 'submit' }, 'Sign in'),
    status,
  );
  replace(root, form);
  input.focus();
};
