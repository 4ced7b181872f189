// The pages' only script (no inline script: the Content-Security-Policy forbids it). Everything works without
// it; it adds copy buttons and a confirmation before destructive forms.
'use strict';

document.addEventListener('click', async (event) => {
  const button = event.target.closest('button[data-copy]');
  if (!button) return;
  const field = document.getElementById(button.dataset.copy);
  if (!field) return;
  try {
    await navigator.clipboard.writeText(field.value);
  } catch {
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
