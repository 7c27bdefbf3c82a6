// MathJax configuration for pymdownx.arithmatex (generic mode). MathJax itself is not bundled:
// pages read fine without it (the TeX source stays visible); add a local copy to render formulas.
window.MathJax = {
  tex: { inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]], processEscapes: true, processEnvironments: true },
  options: { ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex" }
};
