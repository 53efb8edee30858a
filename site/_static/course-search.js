/* The course site's search, on top of Sphinx's searchtools.js (loaded deferred, after it):
 * - a result links to the section whose title names the query's words, and ranks above pages that only
 *   mention them;
 * - a result's snippet is lesson text only (the article), not the theme's buttons or contents column;
 * - the page a result opens highlights the term and scrolls to that section. Sphinx skips highlighting
 *   on every page that loads searchtools.js, and the theme loads it on every page.
 */
(() => {
  "use strict";

  const words = (text) => (text || "").toLowerCase().split(/\s+/).filter((w) => w.length > 0);
  const queryWords = () => words(new URLSearchParams(window.location.search).get("q"));
  const stem = (w) => (w.length > 3 ? w.replace(/s$/, "") : w); // "tensors" names "Saved-tensor hooks"
  const hitsIn = (title, ws) => ws.filter((w) => title.toLowerCase().includes(stem(w))).length;

  /* The section of document `docIndex` whose title names most of the words, the shortest title of
   * those (the one most about them): {anchor, hits}, or null. */
  const bestSection = (docIndex, ws) => {
    let best = null;
    for (const [title, places] of Object.entries(Search._index.alltitles || {})) {
      const hits = hitsIn(title, ws);
      if (!hits) continue;
      for (const [file, id] of places) {
        const better = !best || hits > best.hits || (hits === best.hits && title.length < best.length);
        if (file === docIndex && id && better) best = { anchor: `#${id}`, hits, length: title.length };
      }
    }
    return best;
  };

  if (typeof Search !== "undefined" && typeof Scorer !== "undefined") {
    Scorer.score = (result) => {
      const ws = queryWords();
      let score = result[4];
      if (!ws.length || !Search._index) return score;
      const titled = hitsIn(result[1], ws) === ws.length;
      if (titled) score += 20; // the page's (or section's) title names every word
      if (!result[2]) {
        const best = bestSection(Search._index.docnames.indexOf(result[0]), ws);
        // the link opens that section, unless the page's own title names the words better
        if (best && (best.hits === ws.length || !titled)) result[2] = best.anchor;
        if (best && best.hits === ws.length) score += 15;
      }
      return score;
    };

    Search.htmlToText = (htmlString, anchor) => {
      const page = new DOMParser().parseFromString(htmlString, "text/html");
      page.querySelectorAll(".headerlink, script, style, .lesson-links, .course-index, mjx-assistive-mml")
        .forEach((el) => el.remove());
      const article = page.querySelector("article.bd-article") || page.querySelector('[role="main"]');
      if (!article) return "";
      const section = anchor ? article.querySelector(anchor) : null;
      return (section || article).textContent.replace(/\\[()[\]]/g, ""); // no TeX delimiters
    };
  }

  /* On a page opened from the search: highlight the words, then show the section about them. */
  const terms = localStorage.getItem("sphinx_highlight_terms");
  const onSearchPage = DOCUMENTATION_OPTIONS.pagename === "search";
  if (!terms || onSearchPage || typeof SphinxHighlight === "undefined") return;

  const landOnSection = () => {
    const article = document.querySelector("article.bd-article");
    if (!article) return;
    let target = window.location.hash ? document.getElementById(window.location.hash.slice(1)) : null;
    if (!target) {
      const ws = words(terms);
      const headings = [...article.querySelectorAll("section > h2, section > h3, section > h4")];
      const heading = headings.find((h) => hitsIn(h.textContent, ws) === ws.length)
        || headings.find((h) => hitsIn(h.textContent, ws) > 0);
      const mark = article.querySelector("span.highlighted");
      target = heading ? heading.parentElement : mark && mark.closest("section[id]");
      if (target && target.id) window.history.replaceState(null, "", `#${target.id}`);
    }
    if (target) target.scrollIntoView();
  };

  document.addEventListener("DOMContentLoaded", () => {
    SphinxHighlight.highlightSearchWords(); // highlights after 10 ms
    window.setTimeout(() => {
      landOnSection();
      // MathJax changes the page's height as it typesets: scroll again once it is done
      const mathjax = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
      if (mathjax) mathjax.then(landOnSection);
    }, 50);
  });
})();
