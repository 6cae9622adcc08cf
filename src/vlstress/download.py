"""Resumable, checksummed, atomic file fetching (stdlib urllib: http, https, file:// and plain
paths).

    fetch(url, dest, sha256=..., cache_dir=...)

A remote file is streamed into `<cache_dir>/<host>/<path>.part`. An interrupted
transfer leaves the `.part` behind and the next call asks the server for the
rest with an HTTP `Range` request. The finished file is verified (size, sha256
when known, an optional `check` such as "the JPEG decodes"), renamed to its
final name in the cache, then copied atomically to `dest`. The cache is kept
outside any workflow output on purpose: Snakemake deletes a job's outputs before
running it, and a failed `download` step must not lose what it already fetched.

Local sources (a path or a file:// URL) are verified and copied without caching.
Every failure a user can act on raises `DownloadError` (a `VlstressError`) whose
message names the URL.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import re
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from vlstress import __version__
from vlstress.errors import VlstressError
from vlstress.io import atomic_path, sha256_file

log = logging.getLogger(__name__)

DEFAULT_CACHE_DIR = Path("data/downloads")
CHUNK = 1 << 16
USER_AGENT = f"vlstress/{__version__} (+urllib)"
RETRY_HTTP_CODES = {408, 425, 429, 500, 502, 503, 504}


class DownloadError(VlstressError):
    """A download that cannot complete: the message names the URL and what to do."""


class _Retryable(Exception):
    """A transient failure: try again (resuming the .part file)."""


def is_local(source: str) -> bool:
    scheme = urlsplit(str(source)).scheme
    return scheme in ("", "file") or len(scheme) == 1  # len 1: a Windows drive letter


def local_path(source: str) -> Path:
    parts = urlsplit(str(source))
    if parts.scheme == "file":
        return Path(urllib.request.url2pathname(unquote(parts.path)))
    return Path(source)


def join_url(base: str, name: str) -> str:
    """`<base>/<name>` for URLs, file:// URLs and folder paths alike."""
    return str(base).rstrip("/") + "/" + name


def cache_path(url: str, cache_dir: str | os.PathLike = DEFAULT_CACHE_DIR) -> Path:
    """Where a remote URL is cached: `<cache_dir>/<host>/<path>`, every part sanitised."""
    parts = urlsplit(url)
    safe = lambda s: re.sub(r"[^A-Za-z0-9._-]", "_", s)  # noqa: E731
    host = safe(parts.netloc) or "host"
    segments = [safe(unquote(s)) for s in parts.path.split("/") if s not in ("", ".", "..")] or [
        "index"
    ]
    if parts.query:
        segments[-1] += "_" + hashlib.sha1(parts.query.encode()).hexdigest()[:10]
    return Path(cache_dir, host, *segments)


def verify(
    path: Path,
    url: str,
    *,
    sha256: str | None = None,
    size: int | None = None,
    check: Callable[[Path], None] | None = None,
) -> None:
    """Raise DownloadError naming `url` unless `path` has the expected size, sha256 and passes
    `check`."""
    actual_size = path.stat().st_size
    if size is not None and actual_size != size:
        raise DownloadError(f"size mismatch for {url}: expected {size} bytes, got {actual_size}")
    if sha256 is not None:
        actual = sha256_file(path)
        if actual != sha256.lower():
            raise DownloadError(
                f"checksum mismatch for {url}: expected sha256 {sha256}, got {actual}"
                " (the source does not serve the released file; use a mirror of the exact file)"
            )
    if check is not None:
        try:
            check(path)
        except VlstressError as exc:
            raise DownloadError(f"{exc} [from {url}]") from None


def fetch(
    url: str,
    dest: str | os.PathLike | None = None,
    *,
    sha256: str | None = None,
    size: int | None = None,
    check: Callable[[Path], None] | None = None,
    cache_dir: str | os.PathLike = DEFAULT_CACHE_DIR,
    retries: int = 3,
    timeout: float = 60.0,
    backoff: float = 1.0,
    progress: bool = True,
    desc: str | None = None,
) -> Path:
    """Fetch `url`, verify it, and copy it atomically to `dest`.

    Returns `dest`, or the verified source file (cache entry or local file) when
    `dest` is None. Remote transfers resume from `<cache>/<...>.part`.
    """
    if is_local(url):
        source = local_path(url)
        if not source.is_file():
            raise DownloadError(f"file not found: {source} (from {url})")
        verify(source, url, sha256=sha256, size=size, check=check)
        return _deliver(source, dest)

    final = cache_path(url, cache_dir)
    if final.is_file():
        try:
            verify(final, url, sha256=sha256, size=size, check=check)
        except DownloadError as exc:
            log.warning("cached copy of %s is not valid, fetching again: %s", url, exc)
            final.unlink()
        else:
            return _deliver(final, dest)

    final.parent.mkdir(parents=True, exist_ok=True)
    part = final.with_name(final.name + ".part")
    attempts = max(1, retries)
    for attempt in range(1, attempts + 1):
        try:
            _transfer(url, part, timeout=timeout, progress=progress, desc=desc or final.name)
            break
        except _Retryable as exc:
            if attempt == attempts:
                kept = (
                    f"; {part.stat().st_size} bytes kept in {part}, run again to resume"
                    if part.is_file()
                    else ""
                )
                raise DownloadError(
                    f"download failed after {attempts} attempt(s): {url} ({exc}){kept}"
                ) from None
            log.warning("%s: %s; retrying (%d/%d)", url, exc, attempt + 1, attempts)
            time.sleep(backoff * 2 ** (attempt - 1))
    try:
        verify(part, url, sha256=sha256, size=size, check=check)
    except DownloadError:
        part.unlink()  # bad bytes must not be resumed from
        raise
    os.replace(part, final)
    return _deliver(final, dest)


def _deliver(source: Path, dest: str | os.PathLike | None) -> Path:
    if dest is None:
        return source
    with atomic_path(dest) as tmp:
        shutil.copyfile(source, tmp)
    return Path(dest)


def _transfer(url: str, part: Path, *, timeout: float, progress: bool, desc: str) -> None:
    """One HTTP attempt: append to `part` from where it stops (Range), or start it over."""
    from tqdm import tqdm

    offset = part.stat().st_size if part.is_file() else 0
    headers = {"User-Agent": USER_AGENT}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 and offset:  # range past the end: the part is complete or stale
            match = re.search(
                r"/(\d+)", exc.headers.get("Content-Range", "") if exc.headers else ""
            )
            if match and int(match.group(1)) == offset:
                return
            part.unlink()
            raise _Retryable("server refused to resume the partial file; starting over") from None
        if exc.code in RETRY_HTTP_CODES:
            raise _Retryable(f"HTTP {exc.code} {exc.reason}") from None
        raise DownloadError(f"HTTP {exc.code} {exc.reason}: {url}") from None
    except urllib.error.URLError as exc:
        raise _Retryable(f"cannot reach the server: {exc.reason}") from None
    except (http.client.HTTPException, TimeoutError, ConnectionError, OSError) as exc:
        raise _Retryable(f"connection failed: {exc!r}") from None

    with response:
        total: int | None
        if offset and response.status == 206:
            match = re.match(r"bytes (\d+)-\d+/(\d+|\*)", response.headers.get("Content-Range", ""))
            if not match or int(match.group(1)) != offset:
                part.unlink()
                raise _Retryable(
                    f"unexpected Content-Range {response.headers.get('Content-Range')!r}; "
                    "starting over"
                )
            total = int(match.group(2)) if match.group(2) != "*" else None
            mode = "ab"
            log.info("resuming %s at byte %d", url, offset)
        else:  # a fresh transfer, or a server that ignores Range: start over
            offset, mode = 0, "wb"
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
        received = offset
        bar = tqdm(
            total=total,
            initial=offset,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=desc,
            disable=not progress,
            leave=False,
        )
        try:
            with open(part, mode) as fh:
                while True:
                    block = response.read(CHUNK)
                    if not block:
                        break
                    fh.write(block)
                    received += len(block)
                    bar.update(len(block))
        except (http.client.HTTPException, TimeoutError, ConnectionError, OSError) as exc:
            raise _Retryable(f"transfer interrupted after {received} bytes: {exc!r}") from None
        finally:
            bar.close()
    if total is not None and received < total:
        raise _Retryable(f"transfer truncated: got {received} of {total} bytes")
