/* The course site's search, on top of Sphinx's searchtools.js (loaded deferred, after it):
 * - a result links to the section whose title names the query's words, and ranks above pages that only
 *   mention them; among those, the page that uses the words most (where they are taught) comes first,
 *   and a page whose titles do not name them opens at the section that uses them most (window.COURSE_TERMS,
 *   written by site/_ext/search_terms.py and loaded on the search page only);
 * - formulas in a snippet read as text (eps^2/6), not as TeX (\frac{\epsilon^2}{6});
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

  /* How often the page uses the query's words ([count, section] per word, from course-terms.js). */
  const usage = (docname, ws) => {
    const table = window.COURSE_TERMS;
    if (!table) return [];
    const doc = table.docs.indexOf(docname);
    return ws.flatMap((w) => w.split(/[^a-z0-9_]+/)).filter((w) => w.length > 2)
      .map((w) => (table.terms[w] || []).find(([d]) => d === doc))
      .filter(Boolean).map(([, count, anchor]) => [count, table.anchors[anchor]]);
  };

  /* A formula as plain text: the common commands as their symbols, the others and the braces dropped. */
  const SYMBOLS = {
    epsilon: "ε", varepsilon: "ε", partial: "∂", cdot: "·", times: "×", sum: "Σ", prod: "Π", sigma: "σ",
    mu: "μ", lambda: "λ", theta: "θ", alpha: "α", beta: "β", gamma: "γ", delta: "δ", Delta: "Δ", nabla: "∇",
    approx: "≈", le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠", neq: "≠", infty: "∞", to: "→",
    rightarrow: "→", lVert: "‖", rVert: "‖", Vert: "‖", sqrt: "√", ldots: "…", cdots: "⋯", in: "∈",
  };
  const texToText = (tex) => tex
    .replace(/^\\[([]|\\[)\]]$/g, "")
    .replace(/\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, "($1)/($2)")
    .replace(/\\([A-Za-z]+)/g, (m, name) => (name in SYMBOLS ? SYMBOLS[name] : ""))
    .replace(/\\[,;:! ]/g, " ")
    .replace(/[{}\\]/g, "")
    .replace(/\s+/g, " ")
    .trim();

  if (typeof Search !== "undefined" && typeof Scorer !== "undefined") {
    Scorer.score = (result) => {
      const ws = queryWords();
      let score = result[4];
      if (!ws.length || !Search._index) return score;
      const titled = hitsIn(result[1], ws) === ws.length;
      if (titled) score += 20; // the page's (or section's) title names every word
      const used = usage(result[0], ws);
      // where a word is taught it is used again and again: 42 uses count for 54, 2 for 16
      score += used.reduce((sum, [count]) => sum + 10 * Math.log2(1 + count), 0);
      if (!result[2]) {
        const best = bestSection(Search._index.docnames.indexOf(result[0]), ws);
        // the link opens that section, unless the page's own title names the words better
        if (best && (best.hits === ws.length || !titled)) result[2] = best.anchor;
        if (best && best.hits === ws.length) score += 15;
        // no title names them: the section that uses them most
        const most = used.reduce((a, b) => (b[0] > a[0] ? b : a), [0, ""]);
        if (!result[2] && !titled && most[1]) result[2] = `#${most[1]}`;
      }
      return score;
    };

    Search.htmlToText = (htmlString, anchor) => {
      const page = new DOMParser().parseFromString(htmlString, "text/html");
      page.querySelectorAll(".headerlink, script, style, .lesson-links, .course-index, mjx-assistive-mml")
        .forEach((el) => el.remove());
      page.querySelectorAll(".math").forEach((el) => { el.textContent = ` ${texToText(el.textContent)} `; });
      const article = page.querySelector("article.bd-article") || page.querySelector('[role="main"]');
      if (!article) return "";
      const section = anchor ? article.querySelector(anchor) : null;
      return (section || article).textContent;
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
