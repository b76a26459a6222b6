import { generate } from 'selfsigned';

/** A self-signed certificate (PEM) and its key, valid for 127.0.0.1 and localhost. */
export interface SelfSignedCert {
  cert: string;
  key: string;
}

/**
 * A fresh P-256 certificate for the loopback media host; it is its own CA, so tests can trust it by PEM
 * (`selfsigned`: a well-kept generator, rather than hand-written DER or an openssl binary).
 */
export const selfSignedCert = async (commonName = 'wa-emulator media host'): Promise<SelfSignedCert> => {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 30 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
};
