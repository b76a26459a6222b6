import { redactUrl } from './logger';

describe('redactUrl', () => {
  it('hides an access token in a logged URL, its name written plainly or percent-encoded (the server decodes both)', () => {
    expect(redactUrl('/v1/status?instance_id=A&access_token=eyJ.x.y')).toBe('/v1/status?instance_id=A&access_token=[redacted]');
    expect(redactUrl('/v1/status?access%5Ftoken=eyJ.x.y&instance_id=A')).toBe('/v1/status?access%5Ftoken=[redacted]&instance_id=A');
    expect(redactUrl('/v1/status?ACCESS%5ftoken=eyJ.x.y')).toBe('/v1/status?ACCESS%5ftoken=[redacted]');
    expect(redactUrl('/v1/status?%61ccess_token=eyJ.x.y')).toBe('/v1/status?%61ccess_token=[redacted]');
    expect(redactUrl('/v1/status?instance_id=A')).toBe('/v1/status?instance_id=A');
    expect(redactUrl('/v1/status?bad=%E0%A4%A&access_token=t#frag')).toBe('/v1/status?bad=%E0%A4%A&access_token=[redacted]#frag');
  });
});
