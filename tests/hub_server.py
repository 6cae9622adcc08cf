"""A Hugging Face hub on 127.0.0.1 for tests: it answers what huggingface_hub's `hf_hub_download`,
`snapshot_download` and `HfApi.model_info` ask (point `HF_ENDPOINT` at `HubServer.url`).

- `GET /api/models/<org>/<name>[/revision/<rev>]`: `{id, sha, siblings: [{rfilename}]}`;
- `GET /api/models/<org>/<name>/tree/<rev>[/<path>]`: the files, with `oid`, `size` and, for an
  LFS file, `lfs: {oid (sha256), size, pointerSize}`;
- `HEAD` / `GET /<org>/<name>/resolve/<rev>/<file>`: the bytes, with `X-Repo-Commit`, `ETag`
  (git's blob id, or the sha256 of an LFS file), `X-Linked-Etag` and `X-Linked-Size` (LFS) and
  `Content-Length`.
An unknown repository, revision or file is a 404 with the hub's `X-Error-Code`. Weight files
(`.safetensors`, `.bin`, `.model`) are served as LFS files, as the hub stores them.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".bin", ".model", ".pt", ".pth")


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


class Repo:
    """A repository's files (name -> bytes) at one commit, with its branch `main`."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = dict(files)
        listing = "".join(f"{name}\0{git_blob_id(data)}\n" for name, data in sorted(files.items()))
        self.commit = hashlib.sha1(listing.encode()).hexdigest()

    @classmethod
    def from_folder(cls, folder: Path) -> Repo:
        return cls(
            {
                path.relative_to(folder).as_posix(): path.read_bytes()
                for path in sorted(folder.rglob("*"))
                if path.is_file()
            }
        )

    def resolves(self, revision: str) -> bool:
        return revision in ("main", self.commit)

    def entry(self, name: str) -> dict:
        data = self.files[name]
        found = {"type": "file", "path": name, "size": len(data), "oid": git_blob_id(data)}
        if name.endswith(LFS_SUFFIXES):
            found["lfs"] = {
                "oid": hashlib.sha256(data).hexdigest(),
                "size": len(data),
                "pointerSize": 134,
            }
        return found


class HubServer:
    """The hub's answers for `repos` (id -> Repo), in a thread; `requests` logs what was asked."""

    def __init__(self, repos: dict[str, Repo]) -> None:
        self.repos = repos
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                server.answer(self, body=False)

            def do_GET(self) -> None:
                server.answer(self, body=True)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> HubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        path = unquote(urlsplit(handler.path).path)
        self.requests.append(f"{handler.command} {path}")
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            self.api(handler, "/".join(parts[2:4]), parts[4:], body)
        elif len(parts) >= 5 and parts[2] == "resolve":
            self.resolve(handler, "/".join(parts[:2]), parts[3], "/".join(parts[4:]), body)
        else:
            self.send(handler, 404, {"error": "not found"}, body)

    def api(self, handler, repo_id: str, rest: list[str], body: bool) -> None:
        repo = self.repos.get(repo_id)
        if repo is None:
            return self.send(handler, 404, {"error": "Repository not found"}, body, "RepoNotFound")
        revision = rest[1] if len(rest) >= 2 else "main"
        if not repo.resolves(revision):
            return self.send(handler, 404, {"error": "Invalid rev id"}, body, "RevisionNotFound")
        if rest[:1] == ["tree"]:
            under = "/".join(rest[2:])
            names = [name for name in sorted(repo.files) if name.startswith(under)]
            return self.send(handler, 200, [repo.entry(name) for name in names], body)
        info = {
            "id": repo_id,
            "modelId": repo_id,
            "sha": repo.commit,
            "private": False,
            "siblings": [{"rfilename": name} for name in sorted(repo.files)],
        }
        self.send(handler, 200, info, body)

    def resolve(self, handler, repo_id: str, revision: str, name: str, body: bool) -> None:
        repo = self.repos.get(repo_id)
        if repo is None:
            return self.send(handler, 404, {"error": "Repository not found"}, body, "RepoNotFound")
        if not repo.resolves(revision):
            return self.send(handler, 404, {"error": "Invalid rev id"}, body, "RevisionNotFound")
        headers = {"X-Repo-Commit": repo.commit}
        if name not in repo.files:
            return self.send(
                handler, 404, {"error": "Entry not found"}, body, "EntryNotFound", headers
            )
        data = repo.files[name]
        entry = repo.entry(name)
        headers["ETag"] = f'"{entry["oid"]}"'
        if "lfs" in entry:
            headers["X-Linked-Etag"] = f'"{entry["lfs"]["oid"]}"'
            headers["X-Linked-Size"] = str(len(data))
        handler.send_response(200)
        for key, value in {**headers, "Content-Length": str(len(data))}.items():
            handler.send_header(key, value)
        handler.send_header("Content-Type", "application/octet-stream")
        handler.end_headers()
        if body:
            handler.wfile.write(data)

    @staticmethod
    def send(handler, status: int, obj, body: bool, error_code: str = "", headers=None) -> None:
        data = json.dumps(obj).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        if error_code:
            handler.send_header("X-Error-Code", error_code)
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        if body:
            handler.wfile.write(data)


# --- tiny models in the hub's layouts --------------------------------------------------------

OPEN_CLIP_REPO = "vlstress-test/tiny-clip"  # an open_clip repository (`arch: hf-hub:...`)
TIMM_REPO = "timm/test_vit.r160_in1k"  # timm's tag `test_vit` + `r160_in1k`
LLAVA_REPO = "vlstress-test/tiny-llava"  # LLaVA-1.5 (model_type llava)
LLAVA_NEXT_REPO = "vlstress-test/tiny-llava-next"  # LLaVA-NeXT (model_type llava_next)


def tiny_repos(folder: Path, clip_config: dict, seed: int = 1) -> dict[str, Repo]:
    """Seeded tiny models as the hub holds them: an open_clip repository of `clip_config`
    (open_clip_config.json + open_clip_model.safetensors), timm's test_vit weights (config.json +
    model.safetensors) and two LLaVAs (`save_pretrained` of model and processor)."""
    import open_clip
    import timm
    import torch
    from safetensors.torch import save_file

    from vlstress.embedding import llava_models

    found = {}
    clip = folder / "clip"
    clip.mkdir(parents=True)
    (clip / "open_clip_config.json").write_text(json.dumps({"model_cfg": clip_config}))
    torch.manual_seed(seed)
    model = open_clip.create_model(f"local-dir:{clip}")
    save_file(model.state_dict(), clip / "open_clip_model.safetensors")
    found[OPEN_CLIP_REPO] = Repo.from_folder(clip)

    torch.manual_seed(seed)
    net = timm.create_model("test_vit", pretrained=False)
    tensors = {name: value.contiguous() for name, value in net.state_dict().items()}
    found[TIMM_REPO] = Repo(
        {
            "config.json": json.dumps({"architecture": "test_vit", "num_classes": 1000}).encode(),
            "model.safetensors": _safetensors_bytes(tensors, folder / "timm.safetensors"),
        }
    )
    for repo, config in ((LLAVA_REPO, "tiny"), (LLAVA_NEXT_REPO, "tiny-next")):
        model, processor = llava_models.tiny(seed, config)
        out = folder / config
        model.save_pretrained(out)
        processor.save_pretrained(out)
        found[repo] = Repo.from_folder(out)
    return found


def _safetensors_bytes(tensors: dict, path: Path) -> bytes:
    from safetensors.torch import save_file

    save_file(tensors, path)
    return path.read_bytes()
