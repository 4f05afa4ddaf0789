// Drops the CSS rules that no page of the book can match (PurgeCSS, npm);
// run by page_assets.py on each stylesheet bundle.
// argv: the bundle to rewrite, then the pages and scripts whose words count
// as used (the theme's scripts add classes at run time: they count too).
'use strict';
const fs = require('fs');
const {PurgeCSS} = require('purgecss');

const [bundle, ...content] = process.argv.slice(2);
new PurgeCSS().purge({
  content,
  css: [bundle],
  // Set by the theme's scripts on <html> (light/dark), never in the markup.
  safelist: {greedy: [/data-theme/, /data-mode/]},
}).then(([result]) => fs.writeFileSync(bundle, result.css))
  .catch((err) => { console.error(err); process.exit(1); });
