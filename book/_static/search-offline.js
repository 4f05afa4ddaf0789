// The search page offline, with the word forms of the edition's language
// (added to search.html by book/_ext/offline_search.py, after search-pages.js;
// Stemmer is the language's, from Sphinx's language_data.js).
"use strict";
(() => {
  // Snippets: Sphinx fetches each result page for the text around the match,
  // which a browser refuses from file://. The pages' text ships in
  // search-pages.js; fetch() of a book page answers from it.
  const pages = window.BOOK_SEARCH_PAGES || {};
  const fetchPage = window.fetch ? window.fetch.bind(window) : null;
  window.fetch = (resource, options) => {
    const url = new URL(typeof resource === "string" ? resource : resource.url, document.baseURI);
    const key = Object.keys(pages).find((name) => url.pathname.endsWith("/" + name));
    if (key !== undefined) {
      return Promise.resolve(new Response(pages[key], {headers: {"Content-Type": "text/html"}}));
    }
    return fetchPage(resource, options);
  };

  // Synonyms (book_search_synonyms in the book's config): a word the book
  // does not use is searched as the word it does, «прогрев» as «разогрев»,
  // in any form of either («прогрева» too): both are compared by their stems.
  // Word forms: the Russian stemmer cuts «голов» (genitive plural) to «гол»,
  // while «головы» and «голова» are indexed as «голов». A query word also
  // finds the pages indexed under the word itself.
  function patch() {
    const parseQuery = Search._parseQuery;
    const synonyms = window.BOOK_SEARCH_SYNONYMS || {};
    Search._parseQuery = (query) => {
      const stemmer = new Stemmer();
      const stems = Object.fromEntries(Object.entries(synonyms).map(
        ([word, target]) => [stemmer.stemWord(word.toLowerCase()), target]));
      const words = splitQuery(query.trim()).map((word) =>
        stems[stemmer.stemWord(word.toLowerCase())] ?? word);
      const parsed = parseQuery(words.join(" "));
      const index = Search._index;
      for (const word of words) {
        const lower = word.toLowerCase();
        const stem = stemmer.stemWord(lower);
        if (stem === lower) continue;
        for (const table of [index.terms, index.titleterms]) {
          if (!Object.prototype.hasOwnProperty.call(table, lower)) continue;
          table[stem] = [...new Set([].concat(table[stem] ?? [], table[lower]))];
        }
      }
      return parsed;
    };
  }
  if (typeof Search !== "undefined") patch();
  else document.addEventListener("DOMContentLoaded", patch);
})();
