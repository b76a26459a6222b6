import { framesOf, itemBytes } from './callFrames';
import { loadSessionsProto } from './proto';

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

describe('itemBytes', () => {
  const call = loadSessionsProto().Sessions.service.Call;
  const id = 0xfffffffe;
  it('is never less than what an item adds to an encoded frame', () => {
    const reply = Buffer.alloc(3 * 1024 * 1024);
    const error = { kind: 'invalid_argument', code: 'invalid_instance_id', message: 'é'.repeat(300) };
    const replies = [
      { id, reply },
      { id, error },
      { id, reply: Buffer.alloc(0) },
    ];
    for (const item of replies) {
      expect(itemBytes(item.reply, item.error?.kind, item.error?.code, item.error?.message)).toBeGreaterThanOrEqual(
        call.responseSerialize({ items: [item] }).length,
      );
    }
    const request = { id, method: 'GetPairingCode', request: reply };
    expect(itemBytes(request.request, request.method)).toBeGreaterThanOrEqual(call.requestSerialize({ items: [request] }).length);
    // Items add up: a frame of many small ones is counted in full.
    const many = Array.from({ length: 1_000 }, () => ({ id, reply: Buffer.alloc(1) }));
    expect(many.reduce((n, item) => n + itemBytes(item.reply), 0)).toBeGreaterThanOrEqual(call.responseSerialize({ items: many }).length);
  });
});
