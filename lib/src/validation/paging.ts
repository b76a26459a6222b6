import { invalidArgument } from '../errors';

/** Page sizes of every list (`limit`): 1 to `max`, `default` when not given. */
export const PAGE_LIMIT = { default: 100, max: 1_000 } as const;

export interface Page<T> {
  items: T[];
  /** What to pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface PageRequest<T> {
  /** Every item of the list, filtered, in its order. */
  items: readonly T[];
  /** The list's order (negative: `a` comes first). */
  compare: (a: T, b: T) => number;
  /** An item's cursor: the key that names it for good (the page after it starts after it). */
  cursorOf: (item: T) => string;
  /** The item a cursor names, looked up among all items, filters aside (so a page goes on after the item changed). */
  find: (cursor: string) => T | undefined;
  cursor: string;
  limit: number;
}

/** A page's size from the request's `limit` (0 = the default), within PAGE_LIMIT. */
export const pageSize = (limit: number): number => Math.min(Math.max(limit || PAGE_LIMIT.default, 1), PAGE_LIMIT.max);

/**
 * One page of a list held in memory, after the item the cursor names. The cursor is an item's key, not a position,
 * so items added meanwhile do not shift the pages; an unknown cursor (never issued for this list) is a 400.
 */
export const pageAfter = <T>({ items, compare, cursorOf, find, cursor, limit }: PageRequest<T>): Page<T> => {
  const size = pageSize(limit);
  let rest: readonly T[] = items;
  if (cursor) {
    const after = find(cursor);
    if (after === undefined) throw invalidArgument('invalid_cursor', 'cursor does not name an item of this list: pass a next_cursor of an earlier page');
    rest = items.filter((item) => compare(item, after) > 0);
  }
  const page = rest.slice(0, size);
  const last = page[page.length - 1];
  return { items: page, nextCursor: rest.length > size && last !== undefined ? cursorOf(last) : null };
};
