import { api, errorText } from '../api.js';
import { field, h, notice, replace } from '../dom.js';

/** Send a text or a media message (POST /v1/send). */
export const sendSection = (id: string): HTMLElement => {
  const number = h('input', { type: 'text', inputmode: 'numeric', pattern: '[0-9]{7,15}', required: true, placeholder: '4915112345678' });
  const type = h('select', {}, h('option', { value: 'text' }, 'Text'), h('option', { value: 'media' }, 'Media'));
  const message = h('textarea', { rows: '3', maxlength: '4096' });
  const mediaUrl = h('input', { type: 'url', placeholder: 'https://example.com/picture.jpg' });
  const filename = h('input', { type: 'text', maxlength: '255' });
  const mediaFields = h('div', { hidden: true }, field('Media URL', mediaUrl), field('File name (documents)', filename));
  type.addEventListener('change', () => {
    mediaFields.hidden = type.value !== 'media';
    mediaUrl.required = type.value === 'media';
  });
  const result = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    {
      onsubmit: (event: Event) => {
        event.preventDefault();
        const body: Record<string, string> = { instance_id: id, number: number.value, type: type.value, message: message.value };
        if (type.value === 'media') Object.assign(body, { media_url: mediaUrl.value }, filename.value ? { filename: filename.value } : {});
        replace(result, notice('Sending…'));
        api('/send', {}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
          (answer) => replace(result, notice(`Accepted: ${String(answer.message_id)}`, 'ok')),
          (error: unknown) => replace(result, notice(errorText(error), 'error')),
        );
      },
    },
    field('To (digits, no +)', number),
    field('Type', type),
    field('Message (caption for media)', message),
    mediaFields,
    h('button', { type: 'submit' }, 'Send'),
    result,
  );
  return h('section', { class: 'card', 'aria-labelledby': 'send-heading' }, h('h2', { id: 'send-heading' }, 'Send a message'), form);
};
