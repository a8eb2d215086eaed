"""Making untrusted Markdown (a fork PR's report, posted with a write token) safe to post:
it can mention nobody, reference no other issue, hide nothing, load nothing from other hosts.

- mentions (`@user`, `@org/team`, also written as entities such as `&#64;team`, which GitHub
  may decode before it links mentions) get a zero-width joiner after the `@`;
- raw HTML other than a few formatting tags is shown as text, so `<!-- ... -->` markers (which
  could impersonate another comment's marker), `<img>` and `<a>` do nothing;
- images become their alt text; links and bare URLs to hosts other than the allowed ones
  (GitHub and the repository's Pages site) lose their link;
- cross-references (`owner/repo#1`, `owner/repo@sha`) become code spans, so no other
  issue gets a back-reference.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

ZERO_WIDTH_JOINER = "\u200d"
_AT_ENTITY = re.compile(r"&(?:#0*64|#x0*40|commat);?", re.IGNORECASE)
_ALLOWED_TAG = r"/?(?:details|summary|sub|sup|br|b|i|em|strong|code|kbd)\s*/?>"
_HTML = re.compile(rf"<(?!{_ALLOWED_TAG})", re.IGNORECASE)
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?[^)\n]*\)")
_REFERENCE_DEFINITION = re.compile(r"^(\s{0,3}\[[^\]\n]+\]:)", re.MULTILINE)
_INLINE = re.compile(
    r"(?P<url>(?:https?|ftp)://[^\s<>`)\]|]+|www\.[^\s<>`)\]|]+)"
    r"|(?P<ref>\b[\w.-]+/[\w.-]+(?:#\d+|@[0-9a-f]{7,40}\b))"
    r"|(?P<mention>@(?=[A-Za-z0-9_-]))",
    re.IGNORECASE)


def allowed_hosts(environ: Mapping[str, str], repository: str | None = None) -> set[str]:
    """Hosts an untrusted report may link to: the GitHub server and the repository's Pages."""
    server = urlsplit(environ.get("GITHUB_SERVER_URL") or "https://github.com").hostname or ""
    owner = (repository or environ.get("GITHUB_REPOSITORY") or "").split("/")[0].lower()
    return {server, f"{owner}.github.io"} if owner else {server}


def sanitise_markdown(text: str, allowed_hosts: Iterable[str]) -> str:
    allowed = {h.lower() for h in allowed_hosts if h}
    text = _AT_ENTITY.sub("@", text)
    text = _IMAGE.sub(lambda m: m.group(1), text)
    # Links first, so that an allowed one written `[text](<url>)` keeps working once raw
    # HTML is shown as text: it is rewritten without the angle brackets.
    text = _LINK.sub(lambda m: f"[{m.group(1)}]({m.group(2)})" if _host(m.group(2)) in allowed
                     else m.group(1), text)
    text = _HTML.sub("&lt;", text)
    text = _REFERENCE_DEFINITION.sub(lambda m: "\\" + m.group(1), text)

    def inline(match: re.Match) -> str:
        if match.group("mention"):
            return "@" + ZERO_WIDTH_JOINER
        found = match.group(0)
        if match.group("url") and _host(found) in allowed:
            return found
        return f"`{found}`"

    return _INLINE.sub(inline, text)


def _host(url: str) -> str:
    if url.lower().startswith("www."):
        url = "http://" + url
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""
