"""The name clash with Apple's ``mlx`` distribution, simulated by its metadata alone."""

import os
import subprocess
import sys

import mlx
from mlx.namecheck import clash_message


def _fake_apple_mlx(tmp_path):
    """A ``mlx-0.32.4.dist-info`` on the path: what ``pip install mlx`` leaves in metadata."""
    info = tmp_path / "mlx-0.32.4.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mlx\nVersion: 0.32.4\n")
    return tmp_path


def _run_cli(args, pythonpath):
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    code = "import sys; from mlx.cli import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                          text=True, timeout=120)


def test_no_clash_here():
    assert clash_message() is None


def test_command_names_both_distributions_and_the_fix(tmp_path):
    proc = _run_cli(["methods"], _fake_apple_mlx(tmp_path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("Error: the distributions mlx-multilabel (this program) and mlx "
                               "0.32.4 (Apple's array framework) are both installed in ")
    assert "share the import name 'mlx'; install mlx-multilabel in a separate environment" \
        in lines[0]
    assert "Traceback" not in proc.stderr


def test_same_command_without_the_foreign_metadata_runs(tmp_path):
    proc = _run_cli(["metrics"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "p@<k>" in proc.stdout


def test_foreign_module_without_version_is_detected(monkeypatch):
    monkeypatch.delattr(mlx, "__version__")
    msg = clash_message()
    assert msg.startswith("the module 'mlx' at ")
    assert "is not mlx-multilabel's" in msg
    assert "install mlx-multilabel in a separate environment" in msg


def test_console_script_does_not_use_dunder_main():
    from pathlib import Path

    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["mlx"] == "mlx.cli:main"


def test_quick_look_finds_metadata_as_importlib_does(tmp_path, monkeypatch):
    import importlib.machinery

    from mlx.namecheck import _may_be_installed

    # only the standard finder of distributions (others, e.g. installed by another test's
    # imports, count as maybe)
    monkeypatch.setattr(sys, "meta_path", [importlib.machinery.PathFinder])

    for name in ("MLX-0.32.4.dist-info", "mlx.egg-info", "Mlx-1.0-py3.11.egg-info"):
        path = tmp_path / name.replace(".", "_")
        (path / name).mkdir(parents=True)
        monkeypatch.setattr(sys, "path", [str(path)])
        assert _may_be_installed("mlx"), name
    others = tmp_path / "others"
    for name in ("mlx_multilabel-0.1.0.dist-info", "mlxtend-0.23.dist-info", "mlx"):
        (others / name).mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [str(others), str(tmp_path / "missing")])
    assert not _may_be_installed("mlx")
    zipped = tmp_path / "lib.zip"
    zipped.write_bytes(b"")
    monkeypatch.setattr(sys, "path", [str(zipped)])
    assert _may_be_installed("mlx")          # cannot rule a zip file out: importlib decides

    class OtherFinder:
        @staticmethod
        def find_distributions(context=None):
            return iter(())

    monkeypatch.setattr(sys, "path", [str(others)])
    monkeypatch.setattr(sys, "meta_path", [importlib.machinery.PathFinder, OtherFinder])
    assert _may_be_installed("mlx")          # another finder may know of it: importlib decides


def test_no_clash_is_found_without_importing_importlib_metadata():
    code = ("import sys; from mlx.namecheck import clash_message; "
            "print(clash_message(), 'importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["None", "False"]
