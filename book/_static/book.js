// The book's own behaviour on top of the theme (added by book/_ext/page_assets.py).
"use strict";
(() => {
  // The words this script writes, in the page's language (each edition's
  // pages are lang="ru" or lang="en").
  const WORDS = {
    ru: {
      // Screen-reader labels that the extensions and the theme hard-code in
      // English (the two sidebar tooltips are template overrides: book/_templates).
      labels: {
        "Toggle hidden content": "Показать или скрыть",
        "Main": "Содержание книги",
        "Page": "Страница",
      },
      fullSize: "Открыть рисунок в полном размере",
      solutions: "Решения упражнений",
      moved: "Решение — в конце страницы, в разделе «Решения упражнений».",
    },
    en: {
      labels: {},
      fullSize: "Open the figure at full size",
      solutions: "Solutions to the exercises",
      moved: "The solution is at the end of the page, under “Solutions to the exercises”.",
    },
  };
  const words = WORDS[document.documentElement.lang] || WORDS.en;

  function translateLabels() {
    for (const [english, translated] of Object.entries(words.labels)) {
      document.querySelectorAll(`[aria-label="${english}"]`)
        .forEach((el) => el.setAttribute("aria-label", translated));
    }
  }

  // A figure is drawn at the column's width; on a phone it shrinks, so a tap
  // opens the image at full size.
  function linkFigures() {
    document.querySelectorAll(".bd-article figure img, .bd-article .cell_output img")
      .forEach((img) => {
        const parent = img.closest("a");
        // Sphinx links an image with a set width (a 2x figure) to its file itself.
        if (parent && parent.classList.contains("image-reference")
            && parent.getAttribute("href") === img.getAttribute("src")) {
          parent.classList.add("figure-full");
          parent.title = words.fullSize;
        }
        if (parent) return;
        const link = document.createElement("a");
        link.href = img.getAttribute("src");
        link.className = "figure-full";
        link.title = words.fullSize;
        img.replaceWith(link);
        link.appendChild(img);
      });
  }

  // Print: every fold open, and the solutions after the chapter's last
  // exercise (a printed page cannot fold: the reader tries an exercise first
  // and finds the answers at the back, as in a textbook). Undone after printing.
  let undo = null;

  function prepareForPrint() {
    if (undo) return;  // printToPDF may fire beforeprint after our own call
    const steps = [];
    document.querySelectorAll("details:not([open])").forEach((d) => {
      d.open = true;
      steps.push(() => { d.open = false; });
    });
    document.querySelectorAll(".toggle-hidden").forEach((el) => {
      el.classList.remove("toggle-hidden");
      steps.push(() => el.classList.add("toggle-hidden"));
    });
    const article = document.querySelector("article.bd-article");
    const solutions = article ? [...article.querySelectorAll(".solution")] : [];
    if (solutions.length) {
      const section = document.createElement("section");
      section.className = "print-solutions";
      const heading = document.createElement("h2");
      heading.textContent = words.solutions;
      section.appendChild(heading);
      const exercises = [...article.querySelectorAll(".exercise")];
      for (const solution of solutions) {
        const before = exercises.filter((ex) =>
          ex.compareDocumentPosition(solution) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
        const name = before ? before.querySelector(".admonition-title").textContent.trim() : "";
        const note = document.createElement("p");
        note.className = "print-solutions-note";
        note.textContent = words.moved;
        solution.before(note);
        // The title's text node only: the fold button inside keeps its handlers.
        const title = solution.querySelector(":scope > .admonition-title");
        const text = title && [...title.childNodes].find((n) => n.nodeType === Node.TEXT_NODE);
        const oldText = text ? text.nodeValue : null;
        if (text && name) text.nodeValue = `${oldText.trim()}: ${name}`;
        section.appendChild(solution);
        steps.push(() => {
          note.replaceWith(solution);
          if (text) text.nodeValue = oldText;
        });
      }
      article.appendChild(section);
      steps.push(() => section.remove());
    }
    undo = () => { steps.reverse().forEach((step) => step()); undo = null; };
  }

  window.addEventListener("beforeprint", prepareForPrint);
  window.addEventListener("afterprint", () => { if (undo) undo(); });
  window.bookPrepareForPrint = prepareForPrint;

  document.addEventListener("DOMContentLoaded", () => {
    translateLabels();
    linkFigures();
  });
})();
