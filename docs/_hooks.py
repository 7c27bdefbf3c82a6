"""mkdocs hooks for the jaxdp documentation (loaded by ``hooks:`` in mkdocs.yml).

* Nav entries whose page does not exist are dropped with an INFO line, and entries that are globs
  (``"results/*.md"``) are expanded to the matching pages, sorted by file name. Pages that other
  work adds later therefore appear without editing mkdocs.yml, and a page that is not written yet
  never breaks ``mkdocs build --strict``.
* Docstring-style remarks from griffe (the parser behind mkdocstrings: a missing type in an
  ``Args:`` entry, an unusual indentation) are logged at INFO, not WARNING: they are about the
  formatting of a docstring, not a broken page, and must not fail ``--strict`` for a module that
  another change adds. Broken links, anchors, nav entries and unresolvable API objects still do.
* mkdocs-autorefs reads ``E[regret] [95% CI]`` (a table header) as a reference-style link
  ``[regret][95% CI]``; an unresolved "reference" whose target contains a space or ``%`` is such
  text, not a cross-reference, and is logged at INFO. Unresolved Python identifiers still fail.
* ``:::* jaxdp.pkg`` on an API page expands to the package's docstring and one ``::: jaxdp.pkg.mod``
  block per public module found at build time, so modules added later are documented too.
* A Markdown link to a ``.md`` page that does not exist is rendered as its plain text (INFO line),
  and a ``::: module`` API block for a module that does not exist is replaced by a short note,
  for the same reason.
"""
from __future__ import annotations

import glob
import logging
import os
import posixpath
import re

log = logging.getLogger("mkdocs.hooks.jaxdp")
_DOCS = ""


def _title(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("# "):
                return re.sub(r"\s*\{#.*\}\s*$", "", line[2:]).strip()
    return os.path.splitext(os.path.basename(path))[0].replace("-", " ").replace("_", " ").capitalize()


def _filter(items):
    out = []
    for item in items:
        if isinstance(item, str):
            item = {None: item}
        (title, value), = item.items()
        if isinstance(value, list):
            sub = _filter(value)
            if sub:
                out.append({title: sub} if title else sub)
            continue
        if "://" in value:
            out.append(item if title else value)
            continue
        if any(ch in value for ch in "*?["):
            pages = sorted(glob.glob(os.path.join(_DOCS, value)))
            pages = [p for p in pages if not os.path.basename(p).startswith("_")]
            index = [p for p in pages if os.path.basename(p) == "index.md"]
            pages = index + [p for p in pages if p not in index]
            sub = [{_title(p): os.path.relpath(p, _DOCS).replace(os.sep, "/")} for p in pages]
            if sub:
                out.append({title: sub} if title else sub)
            else:
                log.info("nav: no page matches %s yet; section %r left out", value, title)
            continue
        if os.path.exists(os.path.join(_DOCS, value)):
            out.append(item if title else value)
        else:
            log.info("nav: %s does not exist yet; left out of the nav", value)
    return out


class _DocstringRemarks(logging.Filter):
    def filter(self, record):
        if record.levelno == logging.WARNING:
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg = f"docstring: {record.msg}"
        return True


class _BracketedText(logging.Filter):
    _TARGET = re.compile(r"cross-reference target '([^']*)'")

    def filter(self, record):
        if record.levelno == logging.WARNING:
            m = self._TARGET.search(str(record.msg) % record.args if record.args else str(record.msg))
            if m and re.search(r"[\s%]", m.group(1)):
                record.levelno, record.levelname = logging.INFO, "INFO"
        return True


def on_config(config, **kwargs):
    global _DOCS
    for name in ("mkdocs_autorefs._internal.references", "mkdocs_autorefs._internal.plugin",
                 "mkdocs_autorefs.references", "mkdocs_autorefs.plugin", "mkdocs_autorefs"):
        autorefs_log = logging.getLogger(f"mkdocs.plugins.{name}")
        if not any(isinstance(f, _BracketedText) for f in autorefs_log.filters):
            autorefs_log.addFilter(_BracketedText())
    griffe_log = logging.getLogger("mkdocs.plugins.griffe")
    if not any(isinstance(f, _DocstringRemarks) for f in griffe_log.filters):
        griffe_log.addFilter(_DocstringRemarks())
    _DOCS = config["docs_dir"]
    if config.get("nav"):
        config["nav"] = _filter(config["nav"])
    return config


_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s#]+\.md)(#[^)\s]*)?\)")


_EXPAND = re.compile(r"^:::\* ([\w.]+)[ \t]*$", re.M)


def _expand(m, root):
    name = m.group(1)
    base = os.path.join(root, *name.split("."))
    if not os.path.isdir(base):
        return f"::: {name}\n"
    out = [f"::: {name}", "    options:", "      members: false", "      show_root_heading: false", ""]
    for entry in sorted(os.listdir(base)):
        stem, ext = os.path.splitext(entry)
        if entry.startswith("_"):
            continue
        if ext == ".py" or os.path.isfile(os.path.join(base, entry, "__init__.py")):
            out += [f"::: {name}.{stem}", ""]
    return "\n".join(out) + "\n"


def on_page_markdown(markdown, page, config, files, **kwargs):
    here = posixpath.dirname(page.file.src_uri)
    root = os.path.dirname(os.path.abspath(config["config_file_path"]))
    markdown = _EXPAND.sub(lambda m: _expand(m, root), markdown)

    def fix(m):
        target = m.group(2)
        if "://" in target:
            return m.group(0)
        path = posixpath.normpath(posixpath.join(here, target))
        if os.path.exists(os.path.join(config["docs_dir"], path)):
            return m.group(0)
        if posixpath.basename(path) == "index.md":
            # a section without an index page: link its first page instead
            pages = sorted(glob.glob(os.path.join(config["docs_dir"], posixpath.dirname(path), "*.md")))
            if pages:
                first = posixpath.relpath(posixpath.join(posixpath.dirname(path), os.path.basename(pages[0])), here)
                return f"[{m.group(1)}]({first})"
        log.info("%s: link to %s, which does not exist yet, rendered as text", page.file.src_uri, path)
        return m.group(1)

    markdown = _LINK.sub(fix, markdown)

    def module(m):
        name = m.group(1)
        base = os.path.join(os.path.dirname(os.path.abspath(config["config_file_path"])), *name.split("."))
        if os.path.exists(base + ".py") or os.path.exists(os.path.join(base, "__init__.py")):
            return m.group(0)
        log.info("%s: module %s does not exist yet; left out", page.file.src_uri, name)
        return f"*`{name}` is not available in this version.*\n"

    return _MODULE.sub(module, markdown)


_MODULE = re.compile(r"^::: ([\w.]+)[ \t]*\n(?:[ \t]+.*\n)*", re.M)
