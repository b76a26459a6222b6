/**
 * The one way the console builds DOM: elements with attributes and children, where every string child becomes a
 * text node. Nothing is ever parsed as HTML, so whatever a phone or a user typed is shown as text and runs nothing.
 */
export type Child = Node | string | null | undefined | false;

type Attributes = Record<string, string | boolean | undefined | ((event: Event) => void)>;

export const h = <K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, value);
  }
  append(element, ...children);
  return element;
};

export const append = (parent: Node, ...children: Child[]): void => {
  for (const child of children) if (child) parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
};

/** Replaces what `parent` holds. */
export const replace = (parent: Element, ...children: Child[]): void => {
  parent.replaceChildren();
  append(parent, ...children);
};

/** A live region for a loading, empty or error message. */
export const notice = (text: string, kind: 'loading' | 'empty' | 'error' | 'ok' = 'loading'): HTMLElement =>
  h('p', { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);

/** A labelled form field. */
export const field = (label: string, control: HTMLElement, hint?: string): HTMLElement => {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hint ? h('small', {}, hint) : null);
};
