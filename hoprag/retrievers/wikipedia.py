"""The NotesWriting papers' retrieval setting: search the live MediaWiki API for the query, fetch the
top-k pages, convert their HTML to Markdown with markdownify, and return whole pages.

Every API answer is cached on disk (one JSON file per request), so a rerun of an evaluation costs no
network and returns the same pages. `HOPRAG_WIKIPEDIA_API` points at another MediaWiki API (a mirror,
or a local server in tests)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from hoprag.documents import Document
from hoprag.errors import HopragError
from hoprag.paths import cache_dir
from hoprag.retrievers.base import Retriever

DEFAULT_API = "https://en.wikipedia.org/w/api.php"
# Wikipedia asks API clients to name themselves; HOPRAG_WIKIPEDIA_AGENT can add a contact address.
USER_AGENT = "hoprag/0.1 (iterative retrieval-augmented QA research tool)"
_DROP = re.compile(r"<(style|script)\b.*?</\1>|<div class=\"(?:navbox|reflist|mw-references-wrap)[^\"]*\".*?</div>",
                   re.IGNORECASE | re.DOTALL)


def api_url() -> str:
    return os.environ.get("HOPRAG_WIKIPEDIA_API") or DEFAULT_API


class WikipediaRetriever(Retriever):
    """Whole Wikipedia pages as Markdown for a query, from the MediaWiki API (search, then parse)."""

    timeout: float = 20.0

    def _get(self, params: dict[str, Any]) -> dict[str, Any]:
        base = api_url()
        url = f"{base}?{urllib.parse.urlencode({**params, 'format': 'json', 'formatversion': 2})}"
        cache = cache_dir() / "wikipedia" / f"{hashlib.sha256(url.encode()).hexdigest()}.json"
        if cache.is_file():
            try:
                return json.loads(cache.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                pass  # a file cut by a kill: fetch again
        request = urllib.request.Request(url, headers={"User-Agent": os.environ.get("HOPRAG_WIKIPEDIA_AGENT") or USER_AGENT})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                data = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            raise HopragError(f"the Wikipedia API at {base} answered HTTP {error.code}; try again later") from error
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            raise HopragError(f"cannot reach the Wikipedia API at {base} ({getattr(error, 'reason', error)}); "
                              "--retriever wikipedia needs network access, or HOPRAG_WIKIPEDIA_API set to a "
                              "MediaWiki API mirror") from error
        except json.JSONDecodeError as error:
            raise HopragError(f"the Wikipedia API at {base} did not answer JSON; is it a MediaWiki api.php?") from error
        if "error" in data:
            raise HopragError(f"the Wikipedia API at {base} refused the request: {data['error'].get('info', data['error'])}")
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(".tmp")
        partial.write_text(json.dumps(data), encoding="utf-8")
        partial.replace(cache)
        return data

    def search(self, query: str, k: int) -> list[Document]:
        if k <= 0 or not query.strip():
            return []
        hits = self._get({"action": "query", "list": "search", "srsearch": query, "srlimit": k, "srprop": ""})
        titles = [hit["title"] for hit in (hits.get("query") or {}).get("search") or []][:k]
        return [page for title in titles if (page := self.page(title)) is not None]

    def page(self, title: str) -> Document | None:
        data = self._get({"action": "parse", "page": title, "prop": "text", "redirects": 1,
                          "disableeditsection": 1, "disabletoc": 1})
        parsed = data.get("parse") or {}
        html = parsed.get("text")
        if isinstance(html, dict):  # formatversion 1 layout
            html = html.get("*")
        if not html:
            return None
        from markdownify import markdownify

        body = markdownify(_DROP.sub("", html), heading_style="ATX", strip=["img", "a"]).strip()
        body = re.sub(r"\n{3,}", "\n\n", body)
        name = parsed.get("title") or title
        return Document(id=f"wikipedia:{parsed.get('pageid') or name}", title=name, text=f"# {name}\n\n{body}",
                        source="wikipedia", metadata={"url": f"https://en.wikipedia.org/wiki/{urllib.parse.quote(name.replace(' ', '_'))}"})


def cached_pages() -> list[Path]:
    return sorted((cache_dir() / "wikipedia").glob("*.json"))
