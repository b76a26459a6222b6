import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baileysOptionsFromEnv } from './options';
import { mediaAgentFor } from './socket';

describe('baileys options from the environment', () => {
  it('leaves everything to the defaults when nothing is set', () => {
    expect(baileysOptionsFromEnv({ WA_VERSION: '', WA_WEBSOCKET_URL: '  ' })).toEqual({});
  });

  it('reads the socket URL, version, upload hosts and media TLS settings', () => {
    const ca = join(mkdtempSync(join(tmpdir(), 'wa-ca-')), 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    expect(
      baileysOptionsFromEnv({
        WA_WEBSOCKET_URL: 'ws://127.0.0.1:8080/ws/chat',
        WA_VERSION: '2, 3000, 1019707846',
        WA_MEDIA_UPLOAD_HOSTS: '127.0.0.1:8443, media.local',
        WA_MEDIA_TLS_CA_FILE: ca,
        WA_MEDIA_TLS_INSECURE: 'false',
      }),
    ).toEqual({
      webSocketUrl: 'ws://127.0.0.1:8080/ws/chat',
      version: [2, 3000, 1019707846],
      uploadHosts: ['127.0.0.1:8443', 'media.local'],
      mediaTlsCa: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
      mediaTlsInsecure: false,
    });
  });

  it.each([
    ['WA_VERSION', '2.3000.1019707846', /WA_VERSION must be three comma-separated integers/],
    ['WA_VERSION', '2,3000', /WA_VERSION/],
    ['WA_VERSION', '2,x,1', /WA_VERSION/],
    ['WA_WEBSOCKET_URL', 'not a url', /WA_WEBSOCKET_URL must be a ws:\/\/ or wss:\/\/ URL/],
    ['WA_WEBSOCKET_URL', 'https://web.whatsapp.com/ws/chat', /WA_WEBSOCKET_URL/],
    ['WA_MEDIA_UPLOAD_HOSTS', 'https://media.local', /WA_MEDIA_UPLOAD_HOSTS must be a comma-separated list of hostname\[:port\]/],
    ['WA_MEDIA_TLS_INSECURE', 'yes', /WA_MEDIA_TLS_INSECURE must be true or false/],
    ['WA_MEDIA_TLS_CA_FILE', '/nonexistent/ca.pem', /WA_MEDIA_TLS_CA_FILE cannot be read/],
  ])('refuses %s=%s with a clear error, a bad variable (one line at start, no stack)', (name, value, error) => {
    expect(() => baileysOptionsFromEnv({ [name]: value })).toThrow(error);
    expect(() => baileysOptionsFromEnv({ [name]: value })).toThrow(expect.objectContaining({ code: 'bad_config' }) as Error);
  });

  it('makes a media upload agent only when TLS settings ask for one', () => {
    expect(mediaAgentFor({})).toBeUndefined();
    expect(mediaAgentFor({ mediaTlsInsecure: true })?.options.rejectUnauthorized).toBe(false);
    expect(mediaAgentFor({ mediaTlsCa: 'PEM' })?.options.ca).toBe('PEM');
  });
});
