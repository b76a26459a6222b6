import { token, tokenInstance, whenUnauthorized } from './api.js';
import { h, replace } from './dom.js';
import { instancePage } from './pages/instance.js';
import { instancesPage } from './pages/instances.js';
import { signInPage } from './pages/signIn.js';

/**
 * The console: a hash router over three pages (sign-in, instances, one instance). It calls only the public /v1 API;
 * the token lives in session storage (never in a URL or a log) and any 401 leads back to sign-in.
 */
const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
let stopPage: () => void = () => undefined;

const signOut = (reason?: string): void => {
  token.clear();
  stopPage();
  stopPage = () => undefined;
  replace(nav);
  signInPage(main, () => route(), reason);
  if (location.hash !== '#/signin') history.replaceState(null, '', '#/signin');
};

whenUnauthorized(() => signOut('Your token was refused or has expired; sign in again.'));

const route = (): void => {
  stopPage();
  stopPage = () => undefined;
  if (!token.get()) return signOut();
  const signOutButton = h('button', { type: 'button', class: 'link', onclick: () => signOut() }, 'Sign out');
  // An instance token sees its instance only: no list (403 account_token_required), whatever the link said.
  const only = tokenInstance();
  if (only && location.hash !== `#/instances/${only}`) history.replaceState(null, '', `#/instances/${only}`);
  replace(nav, ...(only ? [] : [h('a', { href: '#/instances' }, 'Instances')]), signOutButton);
  const match = /^#\/instances\/([0-9A-F]{20})$/.exec(location.hash);
  if (match) stopPage = instancePage(main, match[1]!, () => signOut('Your token was refused or has expired; sign in again.'));
  else {
    if (location.hash !== '#/instances') history.replaceState(null, '', '#/instances');
    stopPage = instancesPage(
      main,
      (id) => (location.hash = `#/instances/${id}`),
      () => signOut('Your token was refused or has expired; sign in again.'),
    );
  }
  main.focus();
};

window.addEventListener('hashchange', route);
// "Skip to content" moves the focus, not the route: as a plain #main link it changed the hash, which the router took
// for a page (the instance page left for the list; on sign-in, the typed token wiped).
document.querySelector('a.skip')?.addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});
route();
