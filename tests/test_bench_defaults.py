"""benchmarks/bench_defaults.py: which sets and methods it runs, and how."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_defaults.py"
SYNTH = ("dataset: {synthetic: {n_samples: 60, n_features: 6, n_labels: 4, rank: 2, seed: 2, "
         "n_test: 20}}")


def _module():
    spec = importlib.util.spec_from_file_location("bench_defaults", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_set_without_an_official_split_gets_one_random_split():
    bench = _module()
    assert bench._head("d", "stackex_coffee") == ["name: d", "dataset: stackex_coffee",
                                                   "split: {test_fraction: 0.3, repetitions: 1}"]
    assert bench._head("d", "scene") == ["name: d", "dataset: scene"]


def test_entries_the_config_check_refuses_are_dropped_and_reported(tmp_path):
    bench = _module()
    entries = [bench._entry("constant", "constant"), bench._entry("mom", "mom"),
               bench._entry("cplst", "cplst", params={"l2_reg": 1.0})]
    frame, refused = bench._run_accepted("t", ["name: t", SYNTH], entries, 1, tmp_path, [])
    assert set(frame["label"]) == {"constant", "cplst"}
    assert list(refused) == ["mom"]
    assert "mom reads word counts" in refused["mom"]
    assert len(entries) == 2                       # the refused entry was taken out


def test_the_summary_names_each_loss_to_the_constant_and_the_fallback(tmp_path):
    bench = _module()
    entries = [bench._entry("constant", "constant"), bench._entry("cplst", "cplst"),
               bench._entry("mom", "mom")]
    frame, refused = bench._run_accepted("t", ["name: t", SYNTH], entries, 1, tmp_path, [])
    rows = {r["method"]: r for r in bench.summarise("synthetic", frame, ["cplst", "mom"], {},
                                                    refused)}
    assert rows["mom"]["status"] == "refused"
    cplst, const = rows["cplst"], rows["constant"]
    losses = [m for m in ("p@1", "p@3", "p@5", "auc") if cplst[m] < const[m]]
    losses += ["hamming"] if cplst["hamming"] > const["hamming"] else []
    assert cplst["loses on"] == ",".join(m for m in ("p@1", "p@3", "p@5", "hamming", "auc")
                                         if m in losses)
    assert cplst["prior"] in ("constant",) or cplst["prior"] >= 0
    assert cplst["shift"] >= 0


def test_a_method_name_it_does_not_compare_is_a_one_line_error(monkeypatch, capsys):
    bench = _module()
    monkeypatch.setattr("sys.argv", ["bench_defaults.py", "--methods", "br-sq,leml",
                                     "--datasets", "scene"])
    assert bench.main() == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("bench_defaults: --methods: br-sq not a method compared here "
                          "(br-sq is for --cpu-cost only); valid: bcs, br, cplst, leml")
    assert "\n" not in err


def test_cpu_cost_compares_the_medians_of_interleaved_fits(monkeypatch):
    """``--repeat`` fits of each kind, auto and fixed in turn after an untimed warm-up; the
    ratio of their medians, and the first pair's ratio beside it."""
    import time
    from types import SimpleNamespace

    import mlx.data.catalog as catalog
    from mlx.methods import METHODS
    from tests.conftest import random_multilabel

    X, Y, _ = random_multilabel(0, n=80, d=6, L=5)
    monkeypatch.setattr(catalog, "resolve_dataset", lambda name, source=None: name)
    monkeypatch.setattr(catalog, "dataset_info", lambda name: {"files": {"test": "t"}})
    monkeypatch.setattr(catalog, "load_split",
                        lambda spec: SimpleNamespace(train=SimpleNamespace(X=X, Y=Y)))
    durations = iter([5.0, 1.0, 1.0, 1.0, 3.0, 2.0])        # auto, fixed, auto, fixed, ...
    clock = {"t": 0.0, "started": False}

    def process_time():                                     # each fit takes its duration
        if clock["started"]:
            clock["t"] += next(durations)
        clock["started"] = not clock["started"]
        return clock["t"]

    monkeypatch.setattr(time, "process_time", process_time)
    cls = METHODS.get("cplst")
    fit, calls = cls.fit, []

    def counted(self, *args, **kwargs):
        calls.append((self.l2_reg, args[0].shape[0]))
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(cls, "fit", counted)
    bench = _module()
    (row,) = bench.cpu_cost("synthetic", ["cplst"], repeat=3)
    assert calls[0] == ("auto", 60)                         # the warm-up, on 60 rows
    assert [c[0] == "auto" for c in calls[1:]] == [True, False] * 3
    assert all(c[1] == 80 for c in calls[1:])
    assert row["auto cpu s"] == 3.0 and row["fixed cpu s"] == 1.0
    assert row["cost x"] == 3.0 and row["first x"] == 5.0
