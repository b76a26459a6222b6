import { api, errorText } from '../api.js';
import { field, h, notice, replace } from '../dom.js';

/**
 * Send a text or a media message, or an audio file as a voice note (POST /v1/send). `accepted` runs once a send is
 * accepted: its MessageAccepted makes no webhook, so no live event tells the timeline of it.
 */
export const sendSection = (id: string, accepted: () => void): HTMLElement => {
  const number = h('input', { type: 'text', inputmode: 'numeric', pattern: '[0-9]{7,15}', required: true, placeholder: '4915112345678' });
  const type = h('select', {}, h('option', { value: 'text' }, 'Text'), h('option', { value: 'media' }, 'Media'));
  // No maxlength: the browser counts UTF-16 units, the API characters (4,096 emoji are one text); the API says what is too long.
  const message = h('textarea', { rows: '3' });
  const mediaUrl = h('input', { type: 'url', placeholder: 'https://example.com/picture.jpg' });
  const filename = h('input', { type: 'text', maxlength: '255' });
  const voiceNote = h('input', { type: 'checkbox' });
  const mediaFields = h(
    'div',
    { hidden: true },
    field('Media URL', mediaUrl),
    field('File name (documents)', filename),
    field('Send as a voice note', voiceNote, 'An audio file (OGG/Opus plays on every phone), without a caption'),
  );
  // A voice note has no caption (the API refuses one: 400 invalid_voice_note), so the message box is off meanwhile.
  const sync = () => {
    mediaFields.hidden = type.value !== 'media';
    mediaUrl.required = type.value === 'media';
    message.disabled = type.value === 'media' && voiceNote.checked;
  };
  type.addEventListener('change', sync);
  voiceNote.addEventListener('change', sync);
  const result = h('div', { 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit' }, 'Send');
  // One Idempotency-Key per message: kept until the send is accepted or the form changes, so sending again after an
  // answer that never came (a dropped connection) does not send the message twice.
  let key: string | null = null;
  const form = h(
    'form',
    {
      oninput: () => {
        key = null;
      },
      onchange: () => {
        key = null;
      },
      onsubmit: (event: Event) => {
        event.preventDefault();
        // A double click sends once: the button is off until the answer.
        if (submit.disabled) return;
        submit.disabled = true;
        key ??= newKey();
        const body: Record<string, string | boolean> = { instance_id: id, number: number.value, type: type.value };
        if (!message.disabled) body.message = message.value;
        if (type.value === 'media') {
          Object.assign(body, { media_url: mediaUrl.value }, filename.value ? { filename: filename.value } : {}, voiceNote.checked ? { voice_note: true } : {});
        }
        replace(result, notice('Sending…'));
        const headers = { 'content-type': 'application/json', 'idempotency-key': key };
        api('/send', {}, { method: 'POST', headers, body: JSON.stringify(body) })
          .then(
            (answer) => {
              key = null;
              replace(result, notice(`Accepted: ${String(answer.message_id)}`, 'ok'));
              accepted();
            },
            (error: unknown) => replace(result, notice(errorText(error), 'error')),
          )
          .finally(() => {
            submit.disabled = false;
          });
      },
    },
    field('To (digits, no +)', number),
    field('Type', type),
    field('Message (caption for media)', message),
    mediaFields,
    submit,
    result,
  );
  return h('section', { class: 'card', 'aria-labelledby': 'send-heading' }, h('h2', { id: 'send-heading' }, 'Send a message'), form);
};

/** 128 random bits as hex; `crypto.randomUUID` exists only on https and localhost, and a console may be served on a LAN address. */
const newKey = (): string => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
