import { token, tokenAccount, tokenInstance, whenUnauthorized, type ApiError } from './api.js';
import { h, replace } from './dom.js';
import { instancePage } from './pages/instance.js';
import { instancesPage } from './pages/instances.js';
import { signInPage } from './pages/signIn.js';
import { refusalText } from './refusals.js';

/**
 * The console: a hash router over three pages (sign-in, instances, one instance). It calls only the public /v1 API;
 * the token lives in session storage (never in a URL or a log) and any 401 leads back to sign-in.
 */
const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
let stopPage: () => void = () => undefined;

/** The console's routes: the list, or one instance. Anything else (#/signin, a typo) is no page to go back to. */
const CONSOLE_ROUTE = /^#\/instances(\/[0-9A-F]{20})?$/;
/**
 * The route asked for while signed out (a deep link, or the page a 401 left), opened after sign-in. Kept in session
 * storage, beside the token, so that a reload of the sign-in page does not lose it either.
 */
const WANTED_KEY = 'wagw.console.wanted';

/**
 * Back to sign-in. `remember`: come back to this page after it (not after a deliberate "Sign out"), for the same
 * account only: another account's token would land on "Instance not found". A deep link opened signed out names none.
 */
const signOut = (reason?: string, remember = true): void => {
  const account = tokenAccount();
  token.clear();
  stopPage();
  stopPage = () => undefined;
  if (remember && CONSOLE_ROUTE.test(location.hash)) sessionStorage.setItem(WANTED_KEY, JSON.stringify({ hash: location.hash, account }));
  else if (!remember) sessionStorage.removeItem(WANTED_KEY);
  replace(nav);
  signInPage(main, signedIn, reason);
  if (location.hash !== '#/signin') history.replaceState(null, '', '#/signin');
};

const signedIn = (): void => {
  const wanted = wantedRoute();
  sessionStorage.removeItem(WANTED_KEY);
  history.replaceState(null, '', wanted ?? '#/instances');
  route();
};

/** The page to open after sign-in: the one remembered, unless it was another account's. */
const wantedRoute = (): string | null => {
  try {
    const { hash, account } = JSON.parse(sessionStorage.getItem(WANTED_KEY) ?? 'null') as { hash?: unknown; account?: unknown };
    if (typeof hash !== 'string' || !CONSOLE_ROUTE.test(hash)) return null;
    return account === null || account === tokenAccount() ? hash : null;
  } catch {
    return null;
  }
};

/** A 401 while signed in: sign-in again, saying why the token was refused (invalid, expired, revoked). */
const refused = (error: ApiError): void => signOut(refusalText(error));
whenUnauthorized(refused);

const route = (): void => {
  stopPage();
  stopPage = () => undefined;
  if (!token.get()) return signOut();
  const signOutButton = h('button', { type: 'button', class: 'link', onclick: () => signOut(undefined, false) }, 'Sign out');
  // An instance token sees its instance only: no list (403 account_token_required), whatever the link said.
  const only = tokenInstance();
  if (only && location.hash !== `#/instances/${only}`) history.replaceState(null, '', `#/instances/${only}`);
  replace(nav, ...(only ? [] : [h('a', { href: '#/instances' }, 'Instances')]), signOutButton);
  const match = /^#\/instances\/([0-9A-F]{20})$/.exec(location.hash);
  if (match) stopPage = instancePage(main, match[1]!, refused);
  else {
    if (location.hash !== '#/instances') history.replaceState(null, '', '#/instances');
    stopPage = instancesPage(main, (id) => (location.hash = `#/instances/${id}`), refused);
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
