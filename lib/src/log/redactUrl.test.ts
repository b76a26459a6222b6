import { redactUrl, redactUserinfo } from './redactUrl';

describe('redactUrl', () => {
  it('keeps a routed path as sent, and only the first two segments of one no route serves', () => {
    expect(redactUrl('/v1/history/export?instance_id=A')).toBe('/v1/history/export?instance_id=A');
    expect(redactUrl('/v1/send/call-me-at-noon/x?instance_id=A', false)).toBe('/v1/send/[redacted]/[redacted]?instance_id=A');
    expect(redactUrl('/v1/statuss', false)).toBe('/v1/statuss');
    expect(redactUrl('/v1/send/', false)).toBe('/v1/send/');
  });

  it('hides an access token in a logged URL, its name written plainly or percent-encoded (the server decodes both)', () => {
    expect(redactUrl('/v1/status?instance_id=A&access_token=eyJ.x.y')).toBe('/v1/status?instance_id=A&access_token=[redacted]');
    expect(redactUrl('/v1/status?access%5Ftoken=eyJ.x.y&instance_id=A')).toBe('/v1/status?access%5Ftoken=[redacted]&instance_id=A');
    expect(redactUrl('/v1/status?ACCESS%5ftoken=eyJ.x.y')).toBe('/v1/status?ACCESS%5ftoken=[redacted]');
    expect(redactUrl('/v1/status?%61ccess_token=eyJ.x.y')).toBe('/v1/status?%61ccess_token=[redacted]');
    expect(redactUrl('/v1/status?instance_id=A')).toBe('/v1/status?instance_id=A');
    expect(redactUrl('/v1/status?bad=%E0%A4%A&access_token=t#frag')).toBe('/v1/status?bad=[redacted]&access_token=[redacted]');
  });

  it('hides the token wherever the router may read the query from: after a # as after a ?, and past a # or a second ?', () => {
    // find-my-way ends the path at the first ? or # and parses everything after it, on & only.
    expect(redactUrl('/v1/status#instance_id=A&access_token=T1')).not.toContain('T1');
    expect(redactUrl('/v1/status?instance_id=A#&access_token=T2')).not.toContain('T2');
    expect(redactUrl('/v1/status?instance_id=A#access_token=T3')).not.toContain('T3');
    expect(redactUrl('/v1/status?instance_id=A?access_token=T4')).not.toContain('T4');
    expect(redactUrl('/v1/status#access_token=T5')).toBe('/v1/status#access_token=[redacted]');
    expect(redactUrl('/v1/status;access_token=T6')).toBe('/v1/status;access_token=[redacted]');
  });

  it('keeps the values of known-safe parameters only: message content, media and webhook URLs, vCards, names are marked', () => {
    const url =
      '/v1/send?instance_id=6F1C0A9B3D2E4F5A6B7C&number=4915112345678&type=text&message=Meet+me+at+noon' +
      '&media_url=https%3A%2F%2Fs3.example%2Fa.jpg%3FX-Amz-Signature%3Dabc&filename=secret.pdf&vcard=BEGIN%3AVCARD' +
      '&name=Home&latitude=52.5&emoji=%F0%9F%91%8D&quoted_message_id=m_1&limit=10&since=2026-11-23T10%3A00%3A00Z';
    expect(redactUrl(url)).toBe(
      '/v1/send?instance_id=6F1C0A9B3D2E4F5A6B7C&number=[redacted]&type=text&message=[redacted]&media_url=[redacted]' +
        '&filename=[redacted]&vcard=[redacted]&name=[redacted]&latitude=[redacted]&emoji=[redacted]&quoted_message_id=m_1' +
        '&limit=10&since=2026-11-23T10%3A00%3A00Z',
    );
    expect(redactUrl('/v1/set_webhook?instance_id=A&enable=true&events=message.received,message.failed&webhook_url=https%3A%2F%2Fh.example%2F%3Fkey%3Dk')).toBe(
      '/v1/set_webhook?instance_id=A&enable=true&events=message.received,message.failed&webhook_url=[redacted]',
    );
    expect(redactUrl('/v1/sandbox/inbound?instance_id=A&from=4915&text=hello')).toBe('/v1/sandbox/inbound?instance_id=A&from=[redacted]&text=[redacted]');
  });

  it('marks what only looks like a parameter: a bare word, a name that is text, an allowed name holding text or a secret', () => {
    // An & the client did not encode splits a message: its pieces are not parameter names to show.
    expect(redactUrl('/v1/send?message=fish&chips&x%20y=1&enable')).toBe('/v1/send?message=[redacted]&[redacted]&[redacted]&enable');
    expect(redactUrl('/v1/status?instance_id=hello%20world%3F%20secret%3D1')).toBe('/v1/status?instance_id=[redacted]');
    expect(redactUrl('/v1/status?instance_id=' + 'A'.repeat(200))).toBe('/v1/status?instance_id=[redacted]');
    expect(redactUrl('/v1/status?instance_id=%C3%A9t%C3%A9')).toBe('/v1/status?instance_id=[redacted]');
    expect(redactUrl('/v1/send?message=a?access_token=T7#x')).toBe('/v1/send?message=[redacted]');
    expect(redactUrl('/v1/status')).toBe('/v1/status');
  });

  it('hides the userinfo of an absolute-form request target', () => {
    expect(redactUrl('http://alice:pw@h.example/v1/status?instance_id=A')).toBe('http://[redacted]@h.example/v1/status?instance_id=A');
  });
});

describe('redactUserinfo', () => {
  it('hides user and password, or a token, of every URL of a NATS_URL, schemed or not', () => {
    expect(redactUserinfo('nats://alice:s3cret@nats-1:4222')).toBe('nats://[redacted]@nats-1:4222');
    expect(redactUserinfo('nats://TOKEN@a:4222,nats://bob:p%40ss@b:4222, tls://c:4222')).toBe(
      'nats://[redacted]@a:4222,nats://[redacted]@b:4222, tls://c:4222',
    );
    // A password with an @ not encoded: all of it up to the host goes.
    expect(redactUserinfo('nats://u:p@ss@host:4222')).toBe('nats://[redacted]@host:4222');
    expect(redactUserinfo('u:pw@host:4222')).toBe('[redacted]@host:4222');
    expect(redactUserinfo('nats://127.0.0.1:4222')).toBe('nats://127.0.0.1:4222');
  });
});
