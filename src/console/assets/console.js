// The console's little progressive JavaScript for every page (the pages work without it): on the dead
// letters page, a "select all" checkbox for the rows of the page.

document.addEventListener('DOMContentLoaded', () => {
  const all = document.getElementById('select-all');
  if (!all) return;
  const boxes = () => Array.from(document.querySelectorAll('input[type="checkbox"][name="eventId"]'));
  all.hidden = false;
  all.addEventListener('change', () => {
    for (const box of boxes()) box.checked = all.checked;
  });
  for (const box of boxes()) {
    box.addEventListener('change', () => {
      const list = boxes();
      all.checked = list.every((b) => b.checked);
      all.indeterminate = !all.checked && list.some((b) => b.checked);
    });
  }
});
