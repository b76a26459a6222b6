// Preloaded (node --require) into a service process started by a test, so its Baileys accepts the emulator's
// certificate chain: the WhatsApp root key is replaced by the emulator's (WA_EMULATOR_ROOT_KEY, hex). Tests only.
const key = process.env.WA_EMULATOR_ROOT_KEY;
if (key) require('@whiskeysockets/baileys').WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(key, 'hex');
