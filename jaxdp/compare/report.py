"""The leaderboard of ``jaxdp compare`` (:mod:`jaxdp.compare`): where each (learner, ε) lands
(ranked, not ranked with the reason, or a non-private reference), the leaderboard table, its Markdown
page and the ``regret_vs_T.png`` plot.
"""
from __future__ import annotations

import math
import pathlib
from typing import Optional

from .config import METRIC, RANKED, REFERENCE, _command


# --------------------------------------------------------------------------- judging


class _Judge:
    """Where each (learner, ε) lands: ranked, not ranked (with the reason) or a non-private reference."""

    def __init__(self, users: list, builtins: list, audits: dict):
        self.users = {u.name: u for u in users}
        self.builtins = {b.name: b for b in builtins}
        self.audits = audits

    def claim(self, learner: str, eps: float) -> float:
        u = self.users.get(learner)
        if u is None:
            b = self.builtins[learner]
            return eps if b.private else math.inf
        return float(eps) if u.claimed_eps is None else float(u.claimed_eps)

    def judge(self, learner: str, eps: float, certified: bool = True, eps_cert: float = math.nan) -> dict:
        """``{"status", "why", "audit", "audit_eps_lower", "claim"}`` of ``learner`` compared at ``eps``."""
        eps = float(eps)
        res = dict(audit="", audit_eps_lower=math.nan, claim=self.claim(learner, eps))
        u = self.users.get(learner)
        if u is None:
            b = self.builtins[learner]
            if not certified:
                return dict(res, status="not-run", why="not run: its planner cannot certify this (ε, δ, T, d)")
            if not b.private:
                return dict(res, status="non-private", why="non-private reference")
            if math.isfinite(eps_cert) and eps_cert > eps * (1 + 1e-9):
                return dict(res, status="weaker-claim", why=f"certifies only ε = {eps_cert:.3g} > {eps:g}")
            return dict(res, status="certified", why="certified by its privacy ledger")
        c = res["claim"]
        if c == math.inf:
            return dict(res, status="non-private", why="declared non-private (claimed ε = ∞)",
                        audit="declared non-private")
        a = self.audits.get(learner, {}).get(c)
        if a is None:
            return dict(res, status="unaudited", why=f"claims ε = {c:g}, not audited (--no-audit)",
                        audit="not audited")
        lo = float(a["eps_lower"])
        res.update(audit_eps_lower=lo)
        if a["violation"]:
            return dict(res, status="refuted", why=f"claim refuted by the audit: ε ≥ {lo:.3g} > claimed {c:g}",
                        audit=f"REFUTED: eps >= {lo:.3g} > claimed {c:g}")
        if c > eps * (1 + 1e-9):  # type: ignore[operator]
            return dict(res, status="weaker-claim", why=f"claims only ε = {c:g} > {eps:g}",
                        audit=f"not refuted (eps >= {lo:.3g})")
        return dict(res, status="not-refuted", why="claim not refuted by the audit",
                    audit=f"not refuted (eps >= {lo:.3g})")


# --------------------------------------------------------------------------- leaderboard


def _block(status: str) -> int:
    return 0 if status in RANKED else (2 if status in REFERENCE else 1)


def _leaderboard(df, judge: _Judge, T_max):
    import pandas as pd

    from ..studies.framework import fit_slopes, summarize

    by = ["learner", "instance", "eps"]
    top = df[df["T"] == T_max]
    s = summarize(top, by, ["regret", "switches"], n_boot=1000)
    sl = fit_slopes(df, "T", "regret", by=by, upper_half=False, n_boot=300)
    lb = s.merge(sl[by + ["slope", "slope_lo", "slope_hi"]], on=by, how="left")
    lb.insert(3, "T", T_max)
    cert = top.groupby(by).agg(eps_certified=("eps_certified", "first"), certified=("certified", "min")).reset_index()
    lb = lb.merge(cert, on=by, how="left")
    lb["certified"] = lb["certified"].fillna(0).astype(bool)
    lb["kind"] = [("yours" if nm in judge.users else ("private" if judge.builtins[nm].private
                                                      else "non-private reference")) for nm in lb["learner"]]
    verdicts = [judge.judge(r["learner"], r["eps"], bool(r["certified"]), float(r["eps_certified"]))
                for _, r in lb.iterrows()]
    for col in ("status", "why", "audit", "audit_eps_lower"):
        lb[col] = [v[col] for v in verdicts]
    lb["ranked"] = lb["status"].isin(RANKED)
    lb["rank"] = pd.array([pd.NA] * len(lb), dtype="Int64")
    if lb["ranked"].any():
        r = lb[lb["ranked"]].groupby(["instance", "eps"])["regret_mean"].rank(method="min")
        lb.loc[r.index, "rank"] = r.fillna(0).astype(int).to_numpy()
    lb["_block"] = [_block(st) for st in lb["status"]]
    lb = lb.sort_values(["instance", "eps", "_block", "rank", "regret_mean", "learner"],
                        na_position="last").reset_index(drop=True)
    cols = ["instance", "eps", "rank", "learner", "kind", "status", "ranked", "T", "regret_mean", "regret_lo",
            "regret_hi", "slope", "slope_lo", "slope_hi", "switches_mean", "eps_certified", "certified",
            "audit_eps_lower", "audit", "why", "n_seeds"]
    return pd.DataFrame(lb[cols])


def _fmt(x, nd=3):
    try:
        x = float(x)
    except (TypeError, ValueError):   # None, pandas.NA
        return "–"
    if x == math.inf:
        return "∞"
    return f"{x:.{nd}g}" if math.isfinite(x) else "–"


def _user_summary(config: dict, audits: dict, run: Optional[dict]) -> list[str]:
    lines = []
    for u in config.get("users") or []:
        nm, c = u["name"], u.get("claimed_eps")
        if c is not None and float(c) == math.inf:
            lines.append(f"* **{nm}** is declared non-private (claimed ε = ∞): a reference, never ranked.")
            continue
        claim = f"claims ε = {c:g}" if c is not None else "claims each ε it is compared at"
        a = audits.get(nm) or {}
        if not a:
            lines.append(f"* **{nm}** {claim}; the audit was skipped (`--no-audit`): **unaudited, not ranked**.")
            continue
        for e, r in sorted(a.items()):
            verdict = ("**⚠ REFUTED**: the claim is false (up to probability 1e-7); not ranked" if r["violation"]
                       else "not refuted (the audit found no violation; it does not prove privacy): ranked")
            lines.append(f"* **{nm}** {claim}. Privacy audit at ε = {e:g}, δ = {r['claimed_delta']:g}: ε lower "
                         f"bound {r['eps_lower']:.3g} → {verdict}.")
    return lines


def leaderboard_markdown(lb, config: dict, audits: dict, run: Optional[dict] = None) -> str:
    """The leaderboard as Markdown: per instance, the ranked learners (privacy certified by a ledger
    or claimed and not refuted by the audit), the learners not ranked (refuted, unaudited, a weaker
    claim, not run) and the non-private references.

    Args:
        lb: the leaderboard table :func:`jaxdp.compare.compare` returns (one row per learner,
            instance and ε).
        config: the run's configuration as stored in its manifest (class, ε grid, δ, ``T`` grid,
            ``d``, seeds, instances, built-ins, your learners and their claims).
        audits: the audit results per learner of yours and claimed ε (``eps_lower``,
            ``violation``, ``claimed_delta``); empty when the audit was skipped.
        run: the run's options (``out``, ``audit``, ``audit_n``, ``plot``, ``md``) that complete
            the command line shown to resume the run.

    Returns:
        The Markdown page: the settings, the resume command, a summary of each of your learners'
        audits and, per instance, the ranked, unranked and reference tables.
    """
    from ..instances import get_instance

    metric = METRIC.get(config["problem"], "realized regret")
    lines = [f"# Leaderboard: {config['problem']}", "",
             f"Benchmark version {config['benchmark_version']}; d = {config['d']}, δ = {config['delta']:g}, "
             f"T ∈ {{{', '.join(str(t) for t in config['T'])}}}, {config['seeds']} seeds per instance "
             f"(the first of each instance's fixed seed list). Regret is the {metric} at "
             f"T = {max(config['T'])} (mean and 95% bootstrap CI over seeds); the slope is the least-squares "
             "slope of log mean regret in log T over the T grid (95% bootstrap CI); ε cert. is the ε the "
             "learner's privacy ledger certifies (built-ins, configured by their planners in certified mode), "
             "or the ε a learner of yours claims.", "",
             "A learner is **ranked** only when its privacy is certified by a ledger (built-ins) or claimed and "
             "not refuted by the privacy audit (yours). A claim the audit refutes, an unaudited claim and a "
             "claim weaker than the ε compared are listed **not ranked**; non-private learners are "
             "**references**, never ranked.", "",
             "Resume this run (from the directory it was started in), or reproduce it with another `--out`:", "",
             "```bash", _command(config, run), "```", ""]
    if not all((u.get("spec") for u in config.get("users") or [])):
        lines += ["(A learner was passed as a Python object: replace its `module:function` by a MODULE:FACTORY "
                  "the command line can import.)", ""]
    summary = _user_summary(config, audits, run)
    if summary:
        lines += summary + [""]
    head = {0: ("| ε | rank | learner | regret (95% CI) | slope in T (95% CI) | switches | ε cert. / claimed | "
                "audit ε ≥ |", "|---|---|---|---|---|---|---|---|"),
            1: ("| ε | learner | why not ranked | regret (95% CI) | slope in T (95% CI) | switches | "
                "ε claimed | audit ε ≥ |", "|---|---|---|---|---|---|---|---|"),
            2: ("| ε | learner | regret (95% CI) | slope in T (95% CI) | switches |", "|---|---|---|---|---|")}
    title = {0: "Ranked", 1: "Not ranked", 2: "Non-private references (never ranked)"}
    for inst_name, g in lb.groupby("instance", sort=False):
        inst = get_instance(inst_name)
        lines += [f"## {inst_name}", "", f"{inst.description}. {inst.reference}.", ""]
        blocks = [_block(st) for st in g["status"]]
        for blk in (0, 1, 2):
            rows = [r for (_, r), b in zip(g.iterrows(), blocks) if b == blk]
            if not rows:
                continue
            lines += [f"**{title[blk]}**", "", *head[blk]]
            for r in rows:
                name = f"**{r['learner']}**" if r["kind"] == "yours" else r["learner"]
                if r["status"] == "refuted":
                    name += " ⚠ REFUTED"
                regret = f"{_fmt(r['regret_mean'], 4)} [{_fmt(r['regret_lo'])}, {_fmt(r['regret_hi'])}]"
                slope = f"{_fmt(r['slope'], 2)} [{_fmt(r['slope_lo'], 2)}, {_fmt(r['slope_hi'], 2)}]"
                if r["status"] == "not-run":
                    regret = slope = ""
                cells = {0: [f"{r['eps']:g}", str(int(r["rank"])) if r["ranked"] else "–", name, regret, slope,
                             _fmt(r["switches_mean"], 4), _fmt(r["eps_certified"]), _fmt(r["audit_eps_lower"])],
                         1: [f"{r['eps']:g}", name, r["why"], regret, slope, _fmt(r["switches_mean"], 4),
                             _fmt(r["eps_certified"]), _fmt(r["audit_eps_lower"])],
                         2: [f"{r['eps']:g}", name, regret, slope, _fmt(r["switches_mean"], 4)]}[blk]
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines)


#: Line styles of the plot: solid for ranked learners, dotted for references, dashed for the others.
_STYLE = {"certified": "-", "not-refuted": "-", "non-private": ":", "refuted": "--", "unaudited": "-.",
          "weaker-claim": "-.", "not-run": "-."}


def _series_label(learner: str, eps: float, verdict: dict, several_eps: bool) -> str:
    """The legend entry of one (learner, ε) curve: it says whether the curve is ranked, and why not."""
    st, c = verdict["status"], verdict["claim"]
    if st == "non-private":
        return f"{learner}: non-private" + (f" (ε={eps:g} instances)" if several_eps else "")
    if st in RANKED:
        return f"{learner} ε={eps:g}"
    if st == "refuted":
        return f"{learner} claims ε={c:g}: REFUTED by audit (not ranked)"
    if st == "unaudited":
        return f"{learner} claims ε={c:g}: unaudited (not ranked)"
    if st == "weaker-claim":
        return f"{learner} claims ε={c:g} > {eps:g} (not ranked)"
    return f"{learner} ε={eps:g} (not ranked)"


def _plot(df, outdir, judge: _Judge):
    """``regret_vs_T.png``: one panel per instance, one curve per (learner, ε), one legend that
    marks non-private references and unranked learners; the legend's labels are also stored in the
    PNG's ``Description`` text (one per line)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    from ..studies.framework import summarize

    s = summarize(df, ["learner", "instance", "eps", "T"], ["regret"], n_boot=200)
    s = s[s["regret_mean"] > 0]
    several = df["eps"].nunique() > 1
    curves = {}
    for (lrn, e), _ in s.groupby(["learner", "eps"], sort=False):
        v = judge.judge(lrn, e)
        curves[(lrn, e)] = (_series_label(lrn, e, v, several), _STYLE[v["status"]], v["status"])
    order = sorted(curves, key=lambda k: (_block(curves[k][2]), k[0], k[1]))
    colors = {lrn: f"C{i % 10}" for i, lrn in enumerate(dict.fromkeys(k[0] for k in order))}
    refs = list(dict.fromkeys(k[0] for k in order if curves[k][2] == "non-private"))
    colors.update({lrn: str(round(0.3 + 0.4 * i / max(1, len(refs) - 1), 2)) for i, lrn in enumerate(refs)})
    markers = {"-": "o", ":": ".", "--": "x", "-.": "s"}
    insts = sorted(s["instance"].unique())
    fig, axes = plt.subplots(1, max(1, len(insts)), figsize=(4.3 * max(1, len(insts)), 3.8), dpi=110,
                             squeeze=False)
    handles: dict = {}
    for ax, inst in zip(axes[0], insts):
        sub = s[s["instance"] == inst]
        for k in order:
            g = sub[(sub["learner"] == k[0]) & (sub["eps"] == k[1])].sort_values("T")
            if g.empty:
                continue
            label, ls, st = curves[k]
            color = colors[k[0]]   # references in shades of grey
            (h,) = ax.plot(g["T"], g["regret_mean"], ls, marker=markers[ls], ms=4, color=color, label=label,
                           lw=1.6 if st in RANKED else 1.2)
            ax.fill_between(g["T"], g["regret_lo"], g["regret_hi"], alpha=0.12, color=color)
            handles.setdefault(label, h)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("T")
        ax.set_ylabel("regret at T")
        ax.set_title(str(inst), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    labels = [curves[k][0] for k in order if curves[k][0] in handles]
    labels = list(dict.fromkeys(labels))
    fig.legend([handles[lb] for lb in labels], labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 0.95),
               title="solid: ranked · dotted: non-private · dashed: not ranked", title_fontsize=7)
    fig.tight_layout()
    path = pathlib.Path(outdir) / "regret_vs_T.png"
    fig.savefig(path, bbox_inches="tight", metadata={"Description": "\n".join(labels)})
    plt.close(fig)
    return path
