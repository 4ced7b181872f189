// The pages' only script (no inline script: the Content-Security-Policy forbids it). Everything works without
// it; it adds copy buttons, a confirmation before destructive forms, and times in the viewer's own zone.
'use strict';

document.addEventListener('click', async (event) => {
  const button = event.target.closest('button[data-copy], button[data-copy-text]');
  if (!button) return;
  const field = button.dataset.copy === undefined ? undefined : document.getElementById(button.dataset.copy);
  const text = button.dataset.copyText ?? field?.value;
  if (text === undefined) return;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    if (!field) return;
    field.select();
    document.execCommand('copy');
  }
  button.textContent = 'Copied';
  button.setAttribute('aria-live', 'polite');
});

document.addEventListener('submit', (event) => {
  const form = event.target.closest('form[data-confirm]');
  if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
});

// Copy buttons of ids are hidden without this script (the id itself stays selectable).
for (const button of document.querySelectorAll('button[data-copy-text][hidden]')) button.hidden = false;

// The server writes times in UTC (it does not know the viewer's zone); here each becomes the browser's zone. The
// title keeps the exact UTC instant.
const localTime = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
for (const element of document.querySelectorAll('time[datetime]')) {
  const at = new Date(element.getAttribute('datetime'));
  if (!Number.isNaN(at.getTime())) element.textContent = localTime.format(at);
}
