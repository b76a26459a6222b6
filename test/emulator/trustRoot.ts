import { WA_CERT_DETAILS } from '@whiskeysockets/baileys';
import { EMULATOR_ROOT } from './noise';

/**
 * Makes Baileys in this process accept the emulator's certificate chain, by substituting the WhatsApp root key it
 * checks the intermediate certificate against (Baileys 7, noise-handler.js). Tests only: production never does.
 */
export const trustEmulatorRoot = (publicKey: Uint8Array = EMULATOR_ROOT.public): void => {
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(publicKey);
};

/** The environment that makes a service process trust the emulator too (preloads preloadTrust.cjs). */
export const emulatorTrustEnv = (): Record<string, string> => ({
  NODE_OPTIONS: [process.env.NODE_OPTIONS, `--require ${require.resolve('./preloadTrust.cjs')}`].filter(Boolean).join(' '),
  WA_EMULATOR_ROOT_KEY: Buffer.from(EMULATOR_ROOT.public).toString('hex'),
});
