import gzip
import hashlib
import http.server
import socket
import threading
from types import SimpleNamespace

import pytest

from mlx.data import catalog
from mlx.data.catalog import load_split, resolve_dataset, user_data_dir
from mlx.data.fetch import fetch, file_url
from mlx.data.synthetic import make_low_rank_multilabel
from mlx.errors import DataNotFoundError, UnknownNameError

REPO, COMMIT = "acme/toy-data", "0123456789abcdef0123456789abcdef01234567"


def to_mulan_arff(ds) -> str:
    """A Dataset as Mulan sparse ARFF text (labels are the last attributes)."""
    d = ds.n_features
    lines = ["@relation toy"]
    lines += [f"@attribute f{j} numeric" for j in range(d)]
    lines += [f"@attribute label{j} {{0,1}}" for j in range(ds.n_labels)]
    lines.append("@data")
    X, Y = ds.X, ds.Y
    for i in range(ds.n_samples):
        cols = X.indices[X.indptr[i]:X.indptr[i + 1]].tolist()
        vals = X.data[X.indptr[i]:X.indptr[i + 1]].tolist()
        entries = [f"{j} {v!r}" for j, v in zip(cols, vals)]
        entries += [f"{d + j} 1" for j in Y.indices[Y.indptr[i]:Y.indptr[i + 1]].tolist()]
        lines.append("{" + ",".join(entries) + "}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A local HTTP server (thread, ephemeral port) serving tmp_path/srv."""
    root = tmp_path / "srv"
    root.mkdir()
    requests = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass

        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    yield SimpleNamespace(root=root, url=f"http://127.0.0.1:{httpd.server_port}",
                          requests=requests)
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture
def toy(server):
    """A synthetic split published on the server, and a registry entry describing it."""
    split = make_low_rank_multilabel(40, 8, 5, 2, n_test=15, seed=0, name="toy")
    files = {}
    for role, ds in (("train", split.train), ("test", split.test)):
        text = to_mulan_arff(ds).encode()
        src_path = f"data/toy-{role}.arff"
        target = server.root / REPO / COMMIT / src_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text)
        files[role] = {"path": f"toy/toy-{role}.arff.gz",
                       "sha256": hashlib.sha256(text).hexdigest(),
                       "source": {"repository": REPO, "commit": COMMIT, "path": src_path},
                       "raw": text}
    entry = {"format": "arff", "task": "multilabel", "n_labels": 5,
             "files": {r: {k: v for k, v in f.items() if k != "raw"} for r, f in files.items()}}
    return SimpleNamespace(split=split, entry=entry, raw={r: f["raw"] for r, f in files.items()})


def all_files(path):
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.exists() else []


def test_fetch_downloads_verifies_compresses_and_loads(server, toy, monkeypatch):
    monkeypatch.delenv("MLX_DATA_PATH", raising=False)
    paths = fetch("toy", entry=toy.entry, base_url=server.url, progress=False)
    dest = user_data_dir()
    assert paths == [dest / "toy/toy-train.arff.gz", dest / "toy/toy-test.arff.gz"]
    assert all_files(dest) == sorted(paths)  # no temporary files left
    for role, path in zip(("train", "test"), paths):
        assert path.read_bytes()[:2] == b"\x1f\x8b"
        assert gzip.decompress(path.read_bytes()) == toy.raw[role]
    assert server.requests == [f"/{REPO}/{COMMIT}/data/toy-train.arff",
                               f"/{REPO}/{COMMIT}/data/toy-test.arff"]

    monkeypatch.setitem(catalog.registry(), "toy", toy.entry)
    split = load_split(resolve_dataset("toy"))
    for got, want in ((split.train, toy.split.train), (split.test, toy.split.test)):
        assert (got.X != want.X).nnz == 0 and (got.Y != want.Y).nnz == 0

    # already present and verified: nothing is downloaded again
    assert fetch("toy", entry=toy.entry, base_url=server.url, progress=False) == paths
    assert len(server.requests) == 2


def test_fetch_raw_destination_mirror_env_and_progress(server, toy, monkeypatch, tmp_path,
                                                       capsys):
    monkeypatch.setenv("MLX_DATA_MIRROR", server.url)
    entry = {"files": {"train": dict(toy.entry["files"]["train"], path="toy/toy-train.arff")}}
    (path,) = fetch("toy", entry=entry, dest_dir=tmp_path / "dest", progress=True)
    assert path == tmp_path / "dest" / "toy" / "toy-train.arff"
    assert path.read_bytes() == toy.raw["train"]
    assert "toy-train.arff" in capsys.readouterr().err  # the progress bar


def test_fetch_checksum_mismatch_leaves_nothing(server, toy, tmp_path):
    entry = {"files": {"train": dict(toy.entry["files"]["train"], sha256="0" * 64)}}
    url = f"{server.url}/{REPO}/{COMMIT}/data/toy-train.arff"
    with pytest.raises(DataNotFoundError) as exc:
        fetch("toy", entry=entry, base_url=server.url, dest_dir=tmp_path / "dest",
              progress=False)
    actual = hashlib.sha256(toy.raw["train"]).hexdigest()
    assert str(exc.value) == (f"dataset 'toy': checksum mismatch for {url}: content sha256 is "
                              f"{actual}, the registry expects {'0' * 64}; nothing was written")
    assert all_files(tmp_path / "dest") == []


def test_fetch_404(server, toy, tmp_path):
    f = dict(toy.entry["files"]["train"])
    f["source"] = dict(f["source"], path="data/missing.arff")
    url = f"{server.url}/{REPO}/{COMMIT}/data/missing.arff"
    with pytest.raises(DataNotFoundError) as exc:
        fetch("toy", entry={"files": {"train": f}}, base_url=server.url,
              dest_dir=tmp_path / "dest", progress=False)
    assert str(exc.value) == (
        f"dataset 'toy': download failed: {url}: HTTP 404 File not found; to install it by "
        f"hand, download that URL and save it (or its gzip-compressed form) as "
        f"./datasets/{f['path']} or under a directory on MLX_DATA_PATH, where its content "
        f"will be checked against sha256 {f['sha256']}")
    assert all_files(tmp_path / "dest") == []
    assert not (tmp_path / "dest").exists()            # no empty directories left behind


def test_fetch_connection_refused(toy, tmp_path, monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    with pytest.raises(DataNotFoundError) as exc:
        fetch("toy", entry={"files": {"train": toy.entry["files"]["train"]}}, base_url=base,
              dest_dir=tmp_path / "dest", progress=False, timeout=5)
    assert str(exc.value).startswith(
        f"dataset 'toy': download failed: {base}/{REPO}/{COMMIT}/data/toy-train.arff: ")
    assert all_files(tmp_path / "dest") == []


def test_fetch_replaces_a_damaged_copy_and_skips_a_verified_one_elsewhere(server, toy,
                                                                          tmp_path,
                                                                          monkeypatch):
    entry = {"files": {"train": toy.entry["files"]["train"]}}
    dest = tmp_path / "dest"
    (dest / "toy").mkdir(parents=True)
    (dest / "toy" / "toy-train.arff.gz").write_bytes(gzip.compress(b"damaged"))
    (path,) = fetch("toy", entry=entry, base_url=server.url, dest_dir=dest, progress=False)
    assert gzip.decompress(path.read_bytes()) == toy.raw["train"]
    assert len(server.requests) == 1

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "toy").mkdir(parents=True)
    (elsewhere / "toy" / "toy-train.arff").write_bytes(toy.raw["train"])
    monkeypatch.setenv("MLX_DATA_PATH", str(elsewhere))
    (found,) = fetch("toy", entry=entry, base_url=server.url, dest_dir=tmp_path / "other",
                     progress=False)
    assert found == elsewhere / "toy" / "toy-train.arff"
    assert len(server.requests) == 1


def test_file_url_and_unknown_names(monkeypatch):
    f = catalog.get_entry("bibtex")["files"]["train"]
    assert file_url(f) == ("https://raw.githubusercontent.com/tsoumakas/mulan/"
                           "43f6389095ad71984264db4387a8074b22bc7d4a/data/multi-label/bibtex/"
                           "bibtex-train.arff")
    assert file_url(f, "http://mirror.example/raw/") == (
        "http://mirror.example/raw/tsoumakas/mulan/43f6389095ad71984264db4387a8074b22bc7d4a/"
        "data/multi-label/bibtex/bibtex-train.arff")
    monkeypatch.setenv("MLX_DATA_MIRROR", "http://m.example")
    assert file_url(f).startswith("http://m.example/tsoumakas/mulan/")
    with pytest.raises(UnknownNameError, match="unknown dataset 'bibtx'. Did you mean 'bibtex'"):
        fetch("bibtx")
