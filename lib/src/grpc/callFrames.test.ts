import { framesOf } from './callFrames';

describe('framesOf', () => {
  const size = (n: number) => n;
  it('keeps a turn in one frame while it fits', () => {
    expect(framesOf([1, 2, 3], size, 10)).toEqual([[1, 2, 3]]);
  });
  it('starts a new frame where the next item would overflow, in order; an oversized item travels alone', () => {
    expect(framesOf([4, 5, 2, 30, 1], size, 10)).toEqual([[4, 5], [2], [30], [1]]);
  });
  it('makes no frame of nothing', () => {
    expect(framesOf([], size, 10)).toEqual([]);
  });
});
