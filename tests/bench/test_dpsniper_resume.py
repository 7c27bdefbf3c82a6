"""``jaxdp audit --suite dpsniper --out DIR`` (issue 37, part 5): each mechanism's result is kept as soon as it is
done, and a rerun audits only the mechanisms without one (an interrupted suite resumes, it does not start over);
a directory holding a run at other settings is refused with status 2, naming the setting."""
from __future__ import annotations

import json

import pytest

from benchmarks.harness import dpsniper as D
from jaxdp.cli import main

TWO = ["laplace", "dpsniper_noisy_hist_1"]     # two quick mechanisms, in either spelling


def test_an_interrupted_suite_resumes_where_it_stopped(tmp_path, monkeypatch, capsys):
    out = tmp_path / "suite"
    real = D.audit_suite_entry
    audited = []

    def once_then_interrupt(name, **kw):
        if audited:
            raise KeyboardInterrupt
        audited.append(name)
        return real(name, **kw)

    monkeypatch.setattr(D, "audit_suite_entry", once_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        D.run_suite_kept(out, quick=True, names=TWO, verbose=False)
    assert audited == ["laplace"] and sorted(p.name for p in (out / "rows").iterdir()) == ["laplace.json"]
    first = json.loads((out / "rows" / "laplace.json").read_text())

    def counted(name, **kw):
        audited.append(name)
        return real(name, **kw)

    monkeypatch.setattr(D, "audit_suite_entry", counted)
    log = []
    rows = D.run_suite_kept(out, quick=True, names=TWO, verbose=False, log=log.append)
    assert audited == ["laplace", "noisy-hist-1"]               # the rerun audited only the one not done
    assert log == [f"dpsniper: 1 of 2 mechanisms already done in {out}; 1 to audit"]
    assert [r["name"] for r in rows] == ["laplace", "noisy-hist-1"] and rows[0] == first
    # everything done: nothing is audited, the same rows come back
    assert D.run_suite_kept(out, quick=True, names=TWO, verbose=False) == rows and len(audited) == 2
    # other settings in the same directory: refused, naming the setting
    with pytest.raises(ValueError, match=r"other settings \(--seed: 0 there, 1 now\)"):
        D.run_suite_kept(out, quick=True, seed=1, names=TWO, verbose=False)


def test_cli_keeps_results_and_refuses_other_settings(tmp_path, monkeypatch, capsys):
    out = tmp_path / "suite"
    monkeypatch.setattr(D, "_SPECS", {k: D._SPECS[k] for k in ("laplace", "noisy-hist-1")})   # a two-mechanism suite
    assert main(["audit", "--suite", "dpsniper", "--quick", "--out", str(out)]) == 0
    cap = capsys.readouterr()
    assert "0 of 2 mechanisms already done" in cap.err and f"results kept in {out}" in cap.err
    table = cap.out[cap.out.index("| mechanism"):]      # after one progress line per mechanism audited
    assert main(["audit", "--suite", "dpsniper", "--quick", "--out", str(out)]) == 0
    cap = capsys.readouterr()
    assert "2 of 2 mechanisms already done" in cap.err and cap.out.endswith(table)   # resumed: nothing run, same table
    assert main(["audit", "--suite", "dpsniper", "--out", str(out)]) == 2       # not --quick: another run
    assert "--quick: True there, False now" in capsys.readouterr().err
    assert main(["audit", "laplace", "--quick", "--out", str(out)]) == 2
    assert "--out is for --suite" in capsys.readouterr().err
