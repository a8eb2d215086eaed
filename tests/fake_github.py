"""A real HTTP server on 127.0.0.1 implementing the few GitHub REST endpoints the comment flow
uses: who am I (GET /user), list issue comments (paginated with a Link header), create, update.
Failures can be queued: each queued (status, headers) answers the next request instead of
handling it; a (status, headers, body) triple answers with that body; `store_then_fail` makes
the next POST store its comment and still answer with that status (a 5xx whose write landed).

Like GitHub with a workflow's GITHUB_TOKEN, GET /user is refused (403) unless `login` is set,
and comments created through the API are written by that login or by github-actions[bot]."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

PAGE_SIZE = 2  # small, so that a handful of comments spans several pages
MAX_BODY = 65_536  # GitHub refuses longer comment bodies with a 422


def too_long(body: str) -> dict | None:
    if len(body) <= MAX_BODY:
        return None
    return {"message": "Validation Failed", "errors": [
        {"resource": "IssueComment", "code": "custom", "field": "body",
         "message": f"body is too long (maximum is {MAX_BODY} characters)"}]}


class Recorder:
    """Another origin (its own port): records what reaches it, answers an empty list."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str | None]] = []  # path, authorization
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                recorder.requests.append((self.path, self.headers.get("Authorization")))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"[]")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Recorder:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


class FakeGitHub:
    def __init__(self, login: str | None = None) -> None:
        self.login = login
        self.store_then_fail: int | None = None
        self.page_origin: str | None = None  # where Link rel="next" points (default: here)
        self.comments: dict[int, list[dict]] = {}
        self.pulls: dict[int, dict] = {}  # number -> {"number": .., "head": {"sha": ..}}
        self.requests: list[tuple[str, str, str | None]] = []  # method, path, authorization
        self.failures: list[tuple[int, dict]] = []
        self.write_failures: list[tuple[int, dict]] = []  # answers to POST and PATCH only
        self.next_id = 1000
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_comment(self, pr: int, body: str, user: str = "someone-else") -> dict:
        with self.lock:
            self.next_id += 1
            comment = {"id": self.next_id, "body": body, "user": {"login": user},
                       "html_url": f"https://github.test/octo/bench/pull/{pr}#c{self.next_id}"}
            self.comments.setdefault(pr, []).append(comment)
            return comment

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _answer(self, status, body=None, headers=None):
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _start(self) -> bool:
                fake.requests.append((self.command, self.path,
                                      self.headers.get("Authorization")))
                writing = self.command in ("POST", "PATCH") and fake.write_failures
                if fake.failures or writing:
                    pending = fake.write_failures if writing else fake.failures
                    status, headers, *body = pending.pop(0)
                    if body and isinstance(body[0], bytes):
                        return self._raw(status, body[0], headers)
                    self._answer(status, body[0] if body else {"message": "injected failure"},
                                 headers)
                    return False
                return True

            def _raw(self, status, data, headers):
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return False

            def _body(self) -> dict:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length) or b"{}")

            def do_GET(self):
                if not self._start():
                    return
                url = urlparse(self.path)
                if url.path == "/user":
                    return self._answer(200, {"login": fake.login}) if fake.login else \
                        self._answer(403, {"message": "Resource not accessible by integration"})
                pull = re.fullmatch(r"/repos/octo/bench/pulls/(\d+)", url.path)
                if pull:
                    found = fake.pulls.get(int(pull.group(1)))
                    return self._answer(200, found) if found else self._answer(
                        404, {"message": "Not Found"})
                match = re.fullmatch(r"/repos/octo/bench/issues/(\d+)/comments", url.path)
                if not match:
                    return self._answer(404, {"message": "Not Found"})
                page = int(parse_qs(url.query).get("page", ["1"])[0])
                everything = fake.comments.get(int(match.group(1)), [])
                chunk = everything[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
                headers = {}
                if page * PAGE_SIZE < len(everything):
                    where = fake.page_origin or fake.url
                    headers["Link"] = (f'<{where}{url.path}?per_page=100&page={page + 1}>; '
                                       f'rel="next", <{fake.url}{url.path}?page=99>; rel="last"')
                self._answer(200, chunk, headers)

            def do_POST(self):
                if not self._start():
                    return
                match = re.fullmatch(r"/repos/octo/bench/issues/(\d+)/comments", self.path)
                if not match:
                    return self._answer(404, {"message": "Not Found"})
                body = self._body()["body"]
                if too_long(body):
                    return self._answer(422, too_long(body))
                posted = fake.add_comment(int(match.group(1)), body,
                                          fake.login or "github-actions[bot]")
                if fake.store_then_fail:
                    status, fake.store_then_fail = fake.store_then_fail, None
                    return self._answer(status, {"message": "Server Error"})
                self._answer(201, posted)

            def do_PATCH(self):
                if not self._start():
                    return
                match = re.fullmatch(r"/repos/octo/bench/issues/comments/(\d+)", self.path)
                found = [c for cs in fake.comments.values() for c in cs
                         if match and c["id"] == int(match.group(1))]
                if not found:
                    return self._answer(404, {"message": "Not Found"})
                body = self._body()["body"]
                if too_long(body):
                    return self._answer(422, too_long(body))
                found[0]["body"] = body
                self._answer(200, found[0])

        return Handler
