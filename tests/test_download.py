"""Resumable, checksummed downloads against a local HTTP server on 127.0.0.1 (never the real
network).

The server serves small files the tests make: tiny JPEGs, a tiny Karpathy json
and tiny RoCOCO jsons. It can cut a transfer short, ignore Range requests and
logs every request so the tests can see resumes and cache hits.
"""

from __future__ import annotations

import hashlib
import io
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PIL import Image

from vlstress import cli, download
from vlstress.caption_data import karpathy
from vlstress.errors import VlstressError

SETS = ("danger", "diff_concept", "rand_voca", "same_concept")
IDS = (1, 2, 3)


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for name in (
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


def jpeg_bytes(seed: int, size: int = 16) -> bytes:
    img = Image.new("RGB", (size, size), ((seed * 70) % 256, (seed * 30) % 256, (seed * 110) % 256))
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def image_name(image_id: int) -> str:
    return f"COCO_val2014_{image_id:012d}.jpg"


class Server:
    """A threaded http.server on 127.0.0.1:<free port> serving an in-memory dict of files."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.truncate: dict[
            str, int
        ] = {}  # path -> bytes to send before closing (next request only)
        self.ignore_range = False
        self.requests: list[tuple[str, str | None]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep the test output quiet
                pass

            def do_GET(self) -> None:
                server.requests.append((self.path, self.headers.get("Range")))
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404, "Not Found")
                    return
                start = 0
                rng = self.headers.get("Range")
                if rng and not server.ignore_range:
                    start = int(rng.removeprefix("bytes=").split("-")[0])
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                chunk = body[start:]
                self.send_header("Content-Length", str(len(chunk)))
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                cut = server.truncate.pop(self.path, None)
                if cut is not None:  # announce everything, send part, hang up
                    self.wfile.write(chunk[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(chunk)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def paths_requested(self) -> list[str]:
        return [path for path, _ in self.requests]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    srv = Server()
    yield srv
    srv.close()


def karpathy_list(ids=IDS) -> list[dict]:
    return [
        {
            "image": f"val2014/{image_name(i)}",
            "caption": [f"photo number {i} caption {k}" for k in range(5)],
        }
        for i in ids
    ]


def rococo_list(name: str, ids=IDS) -> list[dict]:
    return [
        {
            "image": e["image"],
            "caption": e["caption"] + [c.replace("photo", name) for c in e["caption"]],
        }
        for e in karpathy_list(ids)
    ]


@pytest.fixture
def benchmark(server, monkeypatch):
    """Serve a tiny benchmark and pin its checksums in place of the real ones."""
    kjson = json.dumps(karpathy_list()).encode()
    server.files["/split/coco_karpathy_test.json"] = kjson
    sets = {}
    for name in SETS:
        data = json.dumps(rococo_list(name)).encode()
        server.files[f"/rococo/{name}.json"] = data
        sets[name] = {
            "file": f"{name}.json",
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
        }
    for i in IDS:
        server.files[f"/val2014/{image_name(i)}"] = jpeg_bytes(i)
    fake = {
        "coco_images": {
            "file_pattern": "COCO_val2014_{id:012d}.jpg",
            "url": f"{server.url}/val2014",
        },
        "karpathy_test": {
            "file": "coco_karpathy_test.json",
            "n_images": len(IDS),
            "sha256": hashlib.sha256(kjson).hexdigest(),
            "size": len(kjson),
            "url": f"{server.url}/split/coco_karpathy_test.json",
        },
        "rococo": {"sets": sets, "url": f"{server.url}/rococo"},
    }
    monkeypatch.setattr(karpathy, "sources", lambda: fake)
    return fake


def run_download(tmp_path: Path, *extra: str) -> int:
    return cli.main(
        [
            "download",
            "--dataset",
            "tiny",
            "--kind",
            "karpathy",
            "--out",
            str(tmp_path / "raw"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--retries",
            "1",
            "--timeout",
            "10",
            *extra,
        ]
    )


def test_full_success_then_prepare(tmp_path, server, benchmark, capsys):
    assert run_download(tmp_path) == 0
    raw = tmp_path / "raw"
    assert sorted(p.name for p in (raw / "images").iterdir()) == [image_name(i) for i in IDS]
    assert json.loads((raw / "captions.json").read_text()) == karpathy_list()
    for name in SETS:  # whole split: the served bytes, untouched
        assert (raw / "rococo" / f"{name}.json").read_bytes() == server.files[
            f"/rococo/{name}.json"
        ]
    record = json.loads((raw / "download.json").read_text())
    assert set(record["files"]) == {f"images/{image_name(i)}" for i in IDS} | {
        f"rococo/{n}.json" for n in SETS
    }
    assert record["files"][f"images/{image_name(2)}"] == hashlib.sha256(jpeg_bytes(2)).hexdigest()
    assert record["provenance"]["step"] == "download"
    assert not list(tmp_path.glob(".raw.*"))  # no temp folder left behind

    assert (
        cli.main(
            [
                "prepare",
                "--dataset",
                "tiny",
                "--raw",
                str(raw),
                "--out",
                str(tmp_path / "manifest.json"),
            ]
        )
        == 0
    )
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert [e["image_id"] for e in manifest["images"]] == ["1", "2", "3"]
    assert manifest["images"][0]["caption"][0] == "photo number 1 caption 0"
    assert all(Path(e["path"]).is_file() for e in manifest["images"])

    # a second run is served from the cache: no request reaches the server
    before = len(server.requests)
    first = {p.name: p.read_bytes() for p in raw.rglob("*") if p.is_file()}
    assert run_download(tmp_path) == 0
    assert len(server.requests) == before
    assert {
        p.name: p.read_bytes() for p in raw.rglob("*") if p.is_file()
    } == first  # byte-identical


def test_image_ids_restrict_split_and_rococo(tmp_path, server, benchmark):
    assert run_download(tmp_path, "--image-ids", "3,1") == 0
    raw = tmp_path / "raw"
    # the split's order
    assert [e["image"] for e in json.loads((raw / "captions.json").read_text())] == [
        f"val2014/{image_name(1)}",
        f"val2014/{image_name(3)}",
    ]
    for name in SETS:
        text = (raw / "rococo" / f"{name}.json").read_text()
        assert text == json.dumps(rococo_list(name, ids=(1, 3)))  # official format, restricted
    assert f"/val2014/{image_name(2)}" not in server.paths_requested()


def test_unknown_image_id_is_named(tmp_path, server, benchmark, capsys):
    assert run_download(tmp_path, "--image-ids", "1,99") == 2
    assert "99" in capsys.readouterr().err
    assert not (tmp_path / "raw").exists()


def test_local_images_folder_is_used_first(tmp_path, server, benchmark):
    local = tmp_path / "local"
    local.mkdir()
    (local / "000000000001.jpg").write_bytes(jpeg_bytes(1))  # plain COCO-2017 style name
    (local / image_name(3)).write_bytes(jpeg_bytes(3))  # val2014 name
    assert run_download(tmp_path, "--images", str(local)) == 0
    fetched = [p for p in server.paths_requested() if p.startswith("/val2014/")]
    assert fetched == [f"/val2014/{image_name(2)}"]
    assert (tmp_path / "raw" / "images" / image_name(1)).read_bytes() == jpeg_bytes(1)


def test_resume_after_truncated_transfer(tmp_path, server, benchmark, capsys):
    path = "/split/coco_karpathy_test.json"
    size = len(server.files[path])
    server.truncate[path] = size // 3
    assert run_download(tmp_path) == 2
    err = capsys.readouterr().err
    assert "truncated" in err and f"{server.url}{path}" in err and "resume" in err
    assert not (tmp_path / "raw").exists()
    part = download.cache_path(f"{server.url}{path}", tmp_path / "cache")
    part = part.with_name(part.name + ".part")
    assert part.stat().st_size == size // 3

    assert run_download(tmp_path) == 0  # the next run resumes with a Range request
    assert (path, f"bytes={size // 3}-") in server.requests
    assert json.loads((tmp_path / "raw" / "captions.json").read_text()) == karpathy_list()
    assert not part.exists()


def test_retry_resumes_within_one_run(tmp_path, server, benchmark):
    path = f"/val2014/{image_name(2)}"
    server.truncate[path] = 100
    assert run_download(tmp_path, "--retries", "2") == 0
    assert (path, "bytes=100-") in server.requests
    assert (tmp_path / "raw" / "images" / image_name(2)).read_bytes() == jpeg_bytes(2)


def test_server_ignoring_range_restarts_cleanly(tmp_path, server, benchmark):
    path = f"/rococo/{SETS[0]}.json"
    server.truncate[path] = 50
    server.ignore_range = True
    assert run_download(tmp_path, "--retries", "2") == 0
    assert (tmp_path / "raw" / "rococo" / f"{SETS[0]}.json").read_bytes() == server.files[path]


def test_wrong_checksum_is_a_clear_error_and_leaves_no_output(tmp_path, server, benchmark, capsys):
    path = f"/rococo/{SETS[1]}.json"
    server.files[path] = server.files[path].replace(b"photo", b"PHOTO")  # same size, other bytes
    assert run_download(tmp_path) == 2
    err = capsys.readouterr().err
    assert "checksum mismatch" in err and f"{server.url}{path}" in err
    assert benchmark["rococo"]["sets"][SETS[1]]["sha256"] in err
    assert not (tmp_path / "raw").exists()
    assert not list((tmp_path / "cache").rglob("*.part"))  # bad bytes are not resumed from


def test_http_404_names_the_url(tmp_path, server, benchmark, capsys):
    del server.files[f"/val2014/{image_name(3)}"]
    assert run_download(tmp_path) == 2
    err = capsys.readouterr().err
    assert "404" in err and f"{server.url}/val2014/{image_name(3)}" in err
    assert not (tmp_path / "raw").exists()


def test_corrupt_jpeg_names_the_file(tmp_path, server, benchmark, capsys):
    server.files[f"/val2014/{image_name(2)}"] = jpeg_bytes(2)[:-60]  # a truncated JPEG body
    assert run_download(tmp_path) == 2
    err = capsys.readouterr().err
    assert "corrupt" in err and image_name(2) in err
    assert not (tmp_path / "raw").exists()
    assert not list((tmp_path / "cache").rglob(image_name(2) + "*"))  # nothing kept to resume from


def test_unreachable_host_names_the_url(tmp_path, benchmark, capsys):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/split/coco_karpathy_test.json"
    assert run_download(tmp_path, "--karpathy-url", url) == 2
    err = capsys.readouterr().err
    assert url in err and "cannot reach" in err
    assert not (tmp_path / "raw").exists()


# fetch() on its own


def test_fetch_file_url_and_path_verify_checksum(tmp_path):
    src = tmp_path / "a.bin"
    src.write_bytes(b"hello")
    digest = hashlib.sha256(b"hello").hexdigest()
    out = download.fetch(
        src.as_uri(), tmp_path / "out" / "a.bin", sha256=digest, cache_dir=tmp_path / "cache"
    )
    assert out.read_bytes() == b"hello"
    assert download.fetch(str(src), sha256=digest) == src  # no dest: the verified source itself
    with pytest.raises(VlstressError, match="checksum mismatch"):
        download.fetch(str(src), tmp_path / "b.bin", sha256="0" * 64)
    assert not (tmp_path / "b.bin").exists()
    with pytest.raises(VlstressError, match="file not found"):
        download.fetch(str(tmp_path / "missing.json"))


def test_fetch_http_progress_and_cache(tmp_path, server):
    body = bytes(range(256)) * 1024  # 256 KiB: several chunks
    server.files["/big.bin"] = body
    dest = download.fetch(
        f"{server.url}/big.bin",
        tmp_path / "big.bin",
        cache_dir=tmp_path / "c",
        retries=1,
        size=len(body),
    )
    assert dest.read_bytes() == body
    assert download.cache_path(f"{server.url}/big.bin", tmp_path / "c").read_bytes() == body


def test_cache_path_is_sanitised(tmp_path):
    path = download.cache_path("http://host:8080/a/../b c/x.json?token=1", tmp_path)
    assert path.relative_to(tmp_path).parts[:3] == ("host_8080", "a", "b_c")
    assert ".." not in path.parts and path.name.startswith("x.json_")
