// Start-up: build the page from its summary objects, then load the rows (embedded or from the server).

(async function main() {
  const app = document.getElementById('app');
  try {
    if (document.body.dataset.page === 'compare') await comparePage(app);
    else {
      const files = Number(document.body.dataset.files || '1');
      for (let i = 0; i < files; i++) await reportPage(app, i);
    }
    document.body.dataset.ready = '1';
    document.dispatchEvent(new Event('osmosis:ready'));
  } catch (err) {
    const box = el('p', 'note fatal', 'This page could not load its data: ' + String(err && err.message ? err.message : err));
    app.prepend(box);
    document.body.dataset.ready = 'error';
    document.dispatchEvent(new Event('osmosis:ready'));
    console.error(err);
  }
})();
