import { idempotencyKeyOf } from './rules';

const refusal = (headers: Record<string, unknown>): unknown => {
  try {
    idempotencyKeyOf(headers);
    return null;
  } catch (error) {
    return { code: (error as { code: string }).code, message: (error as Error).message };
  }
};

describe('Idempotency-Key', () => {
  it('takes 1-255 visible ASCII characters, commas included, and none', () => {
    expect(idempotencyKeyOf({ 'idempotency-key': 'order-1,retry' })).toBe('order-1,retry');
    expect(idempotencyKeyOf({ 'idempotency-key': 'k'.repeat(255) })).toBe('k'.repeat(255));
    expect(idempotencyKeyOf({})).toBeUndefined();
  });

  it.each([
    ['256 characters', 'k'.repeat(256)],
    ['a space', 'with space'],
    ['nothing', ''],
    ['a letter beyond ASCII', 'é'],
  ])('refuses %s as not 1-255 visible ASCII characters', (_case, key) => {
    expect(refusal({ 'idempotency-key': key })).toEqual({ code: 'invalid_idempotency_key', message: 'Idempotency-Key must be 1-255 visible ASCII characters' });
  });
});
