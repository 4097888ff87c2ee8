"""Publishing a project to Steward over HTTP: the bundle sent as a stream, Steward's answer read back.

Plain functions, no Qt: `publish_project` packs the project (bundle.py) into a temporary file,
sends it with `PUT /api/projects/{project}/archive` and a bearer token, and gives back Steward's
answer (the project's check, layer by layer) or raises PublishError with Steward's message.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import tempfile
import urllib.parse
from collections.abc import Callable
from typing import IO, Any

from .bundle import Packed, pack

BLOCK_BYTES = 1 << 20
TIMEOUT_SECONDS = 600

Progress = Callable[[int, int], None]


class PublishError(Exception):
    """Steward refused the upload (or could not be reached): its status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}" if status else message)
        self.status = status
        self.message = message


class _Reading:
    """A file read in blocks by http.client, each block reported to `progress`."""

    def __init__(self, file: IO[bytes], size: int, progress: Progress | None) -> None:
        self.file, self.size, self.progress, self.sent = file, size, progress, 0

    def read(self, amount: int = BLOCK_BYTES) -> bytes:
        block = self.file.read(amount)
        self.sent += len(block)
        if self.progress is not None:
            self.progress(self.sent, self.size)
        return block


def archive_url(server_url: str, project: str, replace: bool, allow_broken: bool) -> str:
    """The archive route of `project` on the server, with the flags asked for."""
    query = {key: "true" for key, wanted in (("replace", replace), ("allow_broken", allow_broken)) if wanted}
    path = f"/api/projects/{urllib.parse.quote(project, safe='')}/archive"
    return server_url.rstrip("/") + path + (f"?{urllib.parse.urlencode(query)}" if query else "")


def _connection(url: urllib.parse.SplitResult) -> http.client.HTTPConnection:
    kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    if url.scheme not in {"http", "https"} or not url.hostname:
        raise PublishError(0, f"the server's URL must be http:// or https://, not {url.geturl()!r}")
    return kind(url.hostname, url.port, timeout=TIMEOUT_SECONDS, blocksize=BLOCK_BYTES)


def _message(body: bytes) -> str:
    try:
        return str(json.loads(body).get("error", body.decode("utf-8", "replace")))
    except (ValueError, AttributeError):
        return body.decode("utf-8", "replace").strip() or "no message"


def upload(path: str, url: str, token: str, progress: Progress | None = None) -> dict[str, Any]:
    """PUTs the file at `path` to `url` as it is read; Steward's JSON answer, or PublishError."""
    parts = urllib.parse.urlsplit(url)
    connection = _connection(parts)
    size = os.path.getsize(path)
    headers = {"Content-Type": "application/zip", "Content-Length": str(size), "Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        with open(path, "rb") as file, contextlib.suppress(BrokenPipeError, ConnectionResetError):
            # A server that refuses the upload (413, 401) answers before reading it all: its answer says why.
            connection.request("PUT", target, body=_Reading(file, size, progress), headers=headers)
        response = connection.getresponse()
        body = response.read()
    except (OSError, http.client.HTTPException) as error:
        raise PublishError(0, f"could not reach {parts.netloc}: {error}") from error
    finally:
        connection.close()
    if response.status >= 400:
        raise PublishError(response.status, _message(body))
    return json.loads(body)


def publish_project(
    project_path: str,
    server_url: str,
    token: str,
    project: str,
    *,
    replace: bool = False,
    allow_broken: bool = False,
    progress: Progress | None = None,
) -> tuple[dict[str, Any], Packed]:
    """Packs the project at `project_path` with its local data and publishes it as `project`."""
    handle, bundle = tempfile.mkstemp(suffix=".zip", prefix="steward-publish-")
    os.close(handle)
    try:
        packed = pack(project_path, bundle)
        answer = upload(bundle, archive_url(server_url, project, replace, allow_broken), token, progress)
        return answer, packed
    finally:
        os.remove(bundle)
