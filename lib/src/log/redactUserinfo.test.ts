import { redactUserinfo } from './redactUrl';

describe('redactUserinfo (NATS_URL in the launcher banner, the NATS logs and the CLI messages)', () => {
  it('hides user and password, a token, and a password containing @, on every server of a list', () => {
    expect(redactUserinfo('nats://user:s3cret@10.0.0.1:4222')).toBe('nats://[redacted]@10.0.0.1:4222');
    expect(redactUserinfo('tls://tok3n@nats.example:4222')).toBe('tls://[redacted]@nats.example:4222');
    expect(redactUserinfo('nats://u:p@ss@h:4222')).toBe('nats://[redacted]@h:4222');
    expect(redactUserinfo('nats://a:b@n1:4222,nats://a:b@n2:4222, c:d@n3:4222')).toBe(
      'nats://[redacted]@n1:4222,nats://[redacted]@n2:4222, [redacted]@n3:4222',
    );
  });

  it('leaves a URL without credentials as it is', () => {
    expect(redactUserinfo('nats://127.0.0.1:4222')).toBe('nats://127.0.0.1:4222');
    expect(redactUserinfo('nats://n1:4222,nats://n2:4222')).toBe('nats://n1:4222,nats://n2:4222');
    expect(redactUserinfo('localhost:4222')).toBe('localhost:4222');
  });
});
