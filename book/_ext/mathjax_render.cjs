// Typesets the book's TeX with MathJax 3 (npm mathjax-full, the version the
// book used to load in the browser) into CommonHTML, at build time; run by
// prerender_math.py.
// stdin:  {"scale": 1.273, "assistive": true,
//          "pages": [[{"tex": "...", "display": false}, ...], ...]}
// stdout: {"pages": [{"html": [...], "errors": [null | "message", ...],
//                     "css": "..."}, ...]}
// Each page gets the CSS of exactly the characters its formulas use.
'use strict';
const {mathjax} = require('mathjax-full/js/mathjax.js');
const {TeX} = require('mathjax-full/js/input/tex.js');
const {CHTML} = require('mathjax-full/js/output/chtml.js');
const {liteAdaptor} = require('mathjax-full/js/adaptors/liteAdaptor.js');
const {RegisterHTMLHandler} = require('mathjax-full/js/handlers/html.js');
const {AssistiveMmlHandler} = require('mathjax-full/js/a11y/assistive-mml.js');
require('mathjax-full/js/input/tex/base/BaseConfiguration.js');
require('mathjax-full/js/input/tex/ams/AmsConfiguration.js');
require('mathjax-full/js/input/tex/newcommand/NewcommandConfiguration.js');
require('mathjax-full/js/input/tex/boldsymbol/BoldsymbolConfiguration.js');

const request = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const adaptor = liteAdaptor();
const handler = RegisterHTMLHandler(adaptor);
// The hidden MathML that screen readers read, as the browser's MathJax added.
if (request.assistive) AssistiveMmlHandler(handler);

function typesetPage(formulas) {
  const tex = new TeX({
    packages: ['base', 'ams', 'newcommand', 'boldsymbol'],
    // An error is reported to the build (which fails), not drawn in red.
    formatError: (jax, err) => { throw err; },
  });
  const chtml = new CHTML({fontURL: 'mathjax-fonts'});
  const doc = mathjax.document('', {InputJax: tex, OutputJax: chtml});
  const html = [], errors = [];
  for (const f of formulas) {
    try {
      const node = doc.convert(f.tex, {display: f.display, scale: request.scale,
                                       em: 16, ex: 8, containerWidth: 672});
      html.push(adaptor.outerHTML(node));
      errors.push(null);
    } catch (err) {
      html.push(null);
      errors.push(String((err && err.message) || err));
    }
  }
  return {html, errors, css: adaptor.textContent(chtml.styleSheet(doc))};
}

process.stdout.write(JSON.stringify({pages: request.pages.map(typesetPage)}));
