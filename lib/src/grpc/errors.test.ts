import { Metadata, status as Status } from '@grpc/grpc-js';
import { ExpectedVersionConflictError } from '../eventStore/port';
import { toErrorDetail, toStatus } from './errors';

// What a service answers over gRPC is what the gateway answers over HTTP (the same kind, code and wait): an event
// store version conflict that got past a service's retries must reach neither as the store's internal 409.
describe('a version conflict at the gRPC boundary', () => {
  const conflict = new ExpectedVersionConflictError('6F1C0A9B3D2E4F5A6B7C.instance', 4);
  const answered = {
    kind: 'unavailable',
    code: 'concurrent_update',
    message: 'The instance was changed concurrently by another request; retry',
    retryAfterS: 1,
  };

  it('travels as a retryable concurrent_update in a call item', () => {
    expect(toErrorDetail(conflict)).toEqual(answered);
  });

  it('travels as UNAVAILABLE with the same code and wait as a status', () => {
    const status = toStatus(conflict);
    const metadata = status.metadata ?? new Metadata();
    expect([status.code, status.details]).toEqual([Status.UNAVAILABLE, answered.message]);
    expect([metadata.get('error-kind'), metadata.get('error-code'), metadata.get('error-retry-after-s')]).toEqual([
      ['unavailable'],
      ['concurrent_update'],
      ['1'],
    ]);
  });
});
