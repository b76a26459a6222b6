import { AppError } from '../errors';
import { pageAfter } from './paging';

interface Item {
  id: string;
  at: number;
}
const items: Item[] = [
  { id: 'a', at: 1 },
  { id: 'b', at: 2 },
  { id: 'c', at: 2 },
  { id: 'd', at: 3 },
  { id: 'e', at: 5 },
];
const byAtThenId = (x: Item, y: Item) => x.at - y.at || x.id.localeCompare(y.id);
const page = (list: Item[], cursor: string, limit: number) =>
  pageAfter({ items: list, compare: byAtThenId, cursorOf: (i) => i.id, find: (c) => items.find((i) => i.id === c), cursor, limit });

describe('pageAfter', () => {
  it('walks the whole list in pages of limit, each starting after the previous page, and ends with a null cursor', () => {
    const first = page(items, '', 2);
    expect(first).toEqual({ items: [items[0], items[1]], nextCursor: 'b' });
    const second = page(items, 'b', 2);
    expect(second).toEqual({ items: [items[2], items[3]], nextCursor: 'd' });
    expect(page(items, 'd', 2)).toEqual({ items: [items[4]], nextCursor: null });
  });

  it('has no next cursor when the page holds exactly the rest', () => {
    expect(page(items, 'c', 2).nextCursor).toBeNull();
  });

  it('goes on after a cursor item that the filter now leaves out', () => {
    const withoutB = items.filter((i) => i.id !== 'b');
    expect(page(withoutB, 'b', 10).items.map((i) => i.id)).toEqual(['c', 'd', 'e']);
  });

  it('refuses a cursor that names no item with a 400 invalid_cursor', () => {
    let thrown: unknown;
    try {
      page(items, 'zz', 2);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ kind: 'invalid_argument', code: 'invalid_cursor' });
  });
});
