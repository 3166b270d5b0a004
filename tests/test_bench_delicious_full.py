"""benchmarks/bench_delicious_full.py: its one-line error when delicious is missing."""

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_delicious_full.py"


def test_missing_delicious_is_a_one_line_error_with_status_2(tmp_path):
    env = {**os.environ, "MLX_DATA_PATH": str(tmp_path), "MLX_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True,
                          text=True, cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == ("bench_delicious_full: delicious is not on the data path "
                                   "(set MLX_DATA_PATH)")
