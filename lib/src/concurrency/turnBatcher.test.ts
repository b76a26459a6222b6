import { TurnBatcher } from './turnBatcher';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnBatcher', () => {
  it('hands over everything pushed in one turn as one batch, and later pushes as the next', async () => {
    const batches: number[][] = [];
    const batcher = new TurnBatcher<number>((items) => batches.push(items));
    batcher.push(1);
    batcher.push(2);
    await Promise.resolve();
    batcher.push(3);
    expect(batches).toEqual([]);
    await nextTurn();
    expect(batches).toEqual([[1, 2, 3]]);
    batcher.push(4);
    await nextTurn();
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });
});
