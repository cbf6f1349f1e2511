"""The Starlette app of `dslake serve`: one page per URL, each rendering what a `Lake` method returns.

Why Starlette + Jinja2 + uvicorn: small, well kept, already installed with the MCP SDK (which serves over them),
ASGI so a running run's page can stream its rounds (server-sent events, web/live.py), and Jinja2 escapes every
value by default. No JavaScript build: the pages are rendered on the server; one small static script
(static/live.js) follows a running run, and every page works without it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from dsstar_lake.base.errors import DslakeError, RunNotFound
from dsstar_lake.runs.record import FIGURES_DIR
from dsstar_lake.views.notebook import when
from dsstar_lake.views.selection import selection_heading
from dsstar_lake.web import views
from dsstar_lake.web.access import Guard, check_bind, same_origin
from dsstar_lake.web.asking import MAX_QUESTION, Asks
from dsstar_lake.web.live import follow
from dsstar_lake.web.preview import Previewer

if TYPE_CHECKING:
    # Typing only: the front doors sit above the facade they serve (tests/test_layers.py).
    from dsstar_lake.lake import Lake

TEMPLATES = Path(__file__).parent / "templates"
# The report page is self-contained (figures as data URIs): it may load nothing and run nothing.
REPORT_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
# Pages run only the server's own static script (no inline script), and reach only this server (the event stream).
PAGE_CSP = ("default-src 'none'; img-src data: 'self'; style-src 'unsafe-inline'; script-src 'self'; "
            "connect-src 'self'; form-action 'self'")
# A figure opened on its own: an SVG may hold script, which runs nowhere (sandbox) and reaches nothing.
FIGURE_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
STATIC = Path(__file__).parent / "static"
SHUTDOWN_S = 3
SORTABLE = ("path", "format", "rows", "columns", "files")  # the entries page's columns a person can sort by
ENTRIES_SHOWN = 1000  # rows of the entries page (a filter narrows a big lake; the .json twin has them all)


def preview_options(params: Any) -> dict[str, Any]:
    """Return the entry page's preview options from its query: sort (a column), desc, where (column) and has."""
    return {"sort": params.get("sort", "")[:200] or None, "desc": params.get("desc", "") == "1",
            "where": params.get("where", "")[:200] or None, "has": params.get("has", "")[:200] or None}


def _templates() -> Any:
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True))
    env.filters["when"] = when
    env.filters["size"] = _size
    env.filters["marked"] = _marked
    env.filters["folded"] = _folded
    env.filters["selection_heading"] = selection_heading
    return env


def _marked(text: str, terms: list[str]) -> Any:
    """Return text escaped, with the words a query matched in <mark> (a Jinja2 filter)."""
    from markupsafe import Markup

    from dsstar_lake.views.hitlines import marked_html

    return Markup(marked_html(str(text), terms))


def _folded(hit: Any) -> list[str]:
    """Return the near-identical paths folded under a hit (a Jinja2 filter)."""
    return list(getattr(hit, "kin", None) or [])


JSON_SUFFIX = ".json"


def twin(command: str, data: Any) -> Response:
    """Return a page's `.json` twin: the object `dslake COMMAND --json` prints (docs/json.md)."""
    from dsstar_lake.views.jsonout import envelope

    return JSONResponse(envelope(command, data), headers={"Content-Security-Policy": "default-src 'none'"})


def _size(n: Any) -> str:
    from dsstar_lake.terminal.results import _size as size

    return size(int(n)) if isinstance(n, (int, float)) else ""


class Pages:
    """The page handlers over one open Lake; every Lake call runs on one worker thread (one connection)."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self.env = _templates()
        # One thread: the Lake's SQLite connection and retriever are per thread; the event loop stays free.
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dslake-serve")
        self.asks = Asks(lake)
        self.previewer = Previewer.from_settings(lake.settings)  # a bounded worker process, started on first use

    async def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.worker, partial(fn, *args, **kwargs))

    def page(self, name: str, code: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(lake=self.lake, **context)
        return HTMLResponse(html, status_code=code, headers={"Content-Security-Policy": PAGE_CSP})

    def problem(self, exc: DslakeError) -> HTMLResponse:
        status = 404 if isinstance(exc, RunNotFound) or "not in the catalog" in exc.message else 400
        return self.page("error.html", code=status, message=exc.message, hint=exc.hint)

    async def not_found(self, request: Request, exc: Exception) -> Response:
        """The site's own page for an unknown route (and the method a route does not take)."""
        code = getattr(exc, "status_code", 404)
        return self.page("error.html", code=code, message=f"no page at {request.url.path}" if code == 404
                         else f"{request.method} is not allowed here",
                         hint="the pages: / (status), /search, /entries, /runs; add .json for the data")

    async def home(self, request: Request) -> Response:
        status = await self.call(self.lake.status)
        if request.url.path == "/" + JSON_SUFFIX:
            return twin("status", status.to_dict())
        return self.page("index.html", status=status, runs=(await self.call(self.lake.runs))[:5],
                         not_ready=self.asks.ready())

    async def search(self, request: Request) -> Response:
        from dsstar_lake.views.hitlines import terms_of

        as_json = request.url.path.endswith(JSON_SUFFIX)
        query = request.query_params.get("q", "").strip()
        k = request.query_params.get("k", "")
        hits: list[Any] = []
        if query:
            try:
                hits = await self.call(self.lake.search, query, int(k) if k.isdigit() and int(k) > 0 else None)
            except DslakeError as exc:
                return self.problem(exc)
        if as_json:
            return twin("search", {"question": query, "hits": [h.to_dict() for h in hits]})
        return self.page("search.html", query=query, hits=hits, terms=terms_of(query))

    async def entries(self, request: Request) -> Response:
        """Every entry with its format, rows, columns and files; sorted by ?sort=COLUMN (&desc=1), filtered by
        ?q=WORDS (in the path or what it holds) and ?format=F."""
        rows = await self.call(self.lake.entries)
        params = request.query_params
        words = params.get("q", "").strip().lower().split()
        fmt = params.get("format", "").strip()
        formats = sorted({str(r["format"]) for r in rows if r["format"]})
        shown = [r for r in rows if (not fmt or r["format"] == fmt)
                 and all(w in (r["path"] + " " + " ".join(r["summary"])).lower() for w in words)]
        sort = params.get("sort", "path")
        sort = sort if sort in SORTABLE else "path"
        desc = params.get("desc", "") == "1"
        present = [r for r in shown if r[sort] is not None]
        shown = sorted(present, key=lambda r: (r[sort], r["path"]) if sort != "path" else r["path"],
                       reverse=desc) + [r for r in shown if r[sort] is None]
        if request.url.path.endswith(JSON_SUFFIX):
            return twin("entries", {"entries": shown})
        return self.page("entries.html", entries=shown[:ENTRIES_SHOWN], matched=len(shown), total=len(rows),
                         limit=ENTRIES_SHOWN, sort=sort, desc=desc,
                         q=params.get("q", ""), format=fmt, formats=formats, columns=SORTABLE)

    async def entry(self, request: Request) -> Response:
        path = request.path_params["path"]
        as_json = False
        try:
            shown = await self.call(self.lake.show, path, absolute=True)
        except DslakeError as exc:
            # the twin of /entries/PATH is /entries/PATH.json (a lake file named x.json has x.json.json)
            if not path.endswith(JSON_SUFFIX):
                return self.problem(exc)
            try:
                shown = await self.call(self.lake.show, path.removesuffix(JSON_SUFFIX), absolute=True)
            except DslakeError:
                return self.problem(exc)  # neither PATH nor PATH without .json: say so of the path asked
            as_json = True
        if as_json:
            return twin("show", dict(shown))
        options = preview_options(request.query_params)
        data = await self.call(self.previewer.preview, self.lake, shown["path"], **options)
        return self.page("entry.html", shown=shown, preview=data, options=options)

    async def runs(self, request: Request) -> Response:
        runs = await self.call(self.lake.runs)
        if request.url.path.endswith(JSON_SUFFIX):
            return twin("runs list", list(runs))
        return self.page("runs.html", runs=runs)

    async def run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        as_json = run_id.endswith(JSON_SUFFIX)
        try:
            view = await self.call(self.lake.run, run_id.removesuffix(JSON_SUFFIX))
        except DslakeError as exc:
            return self.problem(exc)
        if as_json:
            return twin("runs show", dict(view))
        return self.page("run.html", **await self.call(self.run_context, view))

    def run_context(self, view: dict[str, Any]) -> dict[str, Any]:
        """Return what the run templates show of a run: its view with scripts, and its own pending prompts."""
        views.run_scripts(view)
        meta = view.get("meta") or {}
        running = meta.get("status") == "running"
        pending = self.asks.pending(meta.get("id")) if running else []
        pick = self.asks.picks.get(meta.get("id") or "") if running else None
        return {"run": view, "meta": meta, "answer": view.get("answer") or {}, "pending": pending, "pick": pick}

    def run_parts(self, run_id: str) -> tuple[list[dict[str, Any]], bool]:
        """Return a run page's parts (id, html, where a new one goes), and whether the run is still running."""
        context = self.run_context(self.lake.run(run_id))

        def part(name: str, element: str, into: str | None = None, keep: bool = False, **more: Any) -> dict[str, Any]:
            html = self.env.get_template(name).render(lake=self.lake, **context, **more)
            return {"id": element, "html": html, "into": into, "keep": keep}

        parts = [part("run_head.html", "run-head"), part("run_summary.html", "run-summary"),
                 part("run_calls.html", "run-calls")]
        parts += [part("run_pending.html", f"pending-{p['stem']}", "pending", True, p=p) for p in context["pending"]]
        if context["pick"]:
            parts.append(part("run_pick.html", "pick", "pending", True))
        parts += [part("run_round.html", f"round-{r['round']}", "rounds", r=r) for r in context["run"]["rounds"]]
        return parts, context["meta"].get("status") == "running"

    async def events(self, request: Request) -> Response:
        try:
            view = await self.call(self.lake.run, request.path_params["run_id"])
        except DslakeError as exc:
            return self.problem(exc)
        run_id = view["meta"].get("id") or request.path_params["run_id"]
        stream = follow(partial(self.run_parts, run_id), self.call, Path(view["folder"]), self.asks.manual_dir(),
                        request.is_disconnected, lambda: self.asks.picks_changed)
        return StreamingResponse(stream, media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def figure(self, request: Request) -> Response:
        try:
            view = await self.call(self.lake.run, request.path_params["run_id"])
        except DslakeError as exc:
            return self.problem(exc)
        found = await self.call(views.run_figure, view, f"{FIGURES_DIR}/{request.path_params['name']}")
        if found is None:
            return self.page("error.html", code=404, message="this run's record names no such figure")
        data, media_type = found
        return Response(data, media_type=media_type, headers={"Content-Security-Policy": FIGURE_CSP,
                                                              "X-Content-Type-Options": "nosniff"})

    async def ask(self, request: Request) -> Response:
        form = await _form(request)
        if form is None:
            return self.page("error.html", code=403, message="a form from another site cannot start an ask")
        question = form.get("q", "").strip()[:MAX_QUESTION]
        why = self.asks.ready() or ("" if question else "the question is empty")
        if why:
            return self.page("error.html", code=400, message=why, hint="see `dslake models` and `dslake doctor`")
        clarify = form.get("clarify") == "1"
        run_id = await asyncio.get_running_loop().run_in_executor(None, self.asks.start, question, clarify)
        if run_id is None:
            failure = self.asks.failures.pop(question, None)
            if failure:
                return self.page("error.html", code=400, message=failure)
        return RedirectResponse(f"/runs/{run_id}" if run_id else "/runs", status_code=303)

    async def pick(self, request: Request) -> Response:
        """A person's pick between readings that give different answers (the run waits for it)."""
        form = await _form(request)
        if form is None:
            return self.page("error.html", code=403, message="a form from another site cannot pick a reading")
        run_id = request.path_params["run_id"]
        if not self.asks.pick(run_id, form.get("n", "")):
            return self.page("error.html", code=400, message=f"run {run_id} is not waiting for a pick")
        return RedirectResponse(f"/runs/{run_id}", status_code=303)

    async def manual(self, request: Request) -> Response:
        form = await _form(request)
        if form is None:
            return self.page("error.html", code=403, message="a form from another site cannot answer a prompt")
        stem = request.path_params["stem"]
        if not self.asks.answer(stem, form.get("answer", "")):
            return self.page("error.html", code=400, message=f"no prompt {stem} is waiting, or the answer is empty")
        return RedirectResponse(form.get("back", "") if form.get("back", "").startswith("/runs/") else "/runs",
                                status_code=303)

    async def report(self, request: Request) -> Response:
        try:
            view = await self.call(self.lake.run, request.path_params["run_id"])
        except DslakeError as exc:
            return self.problem(exc)
        page = await self.call(views.report_page, view)
        if page is None:
            return self.page("error.html", code=404, message=f"run {view['meta'].get('id')} has no report",
                             hint="a report is written by `dslake report`; an ask run has none")
        return HTMLResponse(page, headers={"Content-Security-Policy": REPORT_CSP})


async def _form(request: Request) -> dict[str, str] | None:
    """Return a posted form's fields, or None when it came from another site (a cross-site form post)."""
    from urllib.parse import parse_qs

    if not same_origin(request.headers.get("origin"), request.headers.get("host")):
        return None
    body = (await request.body()).decode("utf-8", errors="replace")
    return {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}


def build_app(lake: Lake, token: str | None = None) -> Guard:
    """Return the ASGI app over an open Lake (token: required on every request, for a non-loopback bind)."""
    pages = Pages(lake)
    routes = [
        Route("/", pages.home), Route("/.json", pages.home), Route("/search", pages.search),
        Route("/search.json", pages.search), Route("/entries", pages.entries), Route("/entries.json", pages.entries),
        Route("/entries/{path:path}", pages.entry), Route("/runs", pages.runs), Route("/runs.json", pages.runs),
        Route("/runs/{run_id}", pages.run), Route("/reports/{run_id}", pages.report),
        Route("/ask", pages.ask, methods=["POST"]), Route("/manual/{stem}", pages.manual, methods=["POST"]),
        Route("/pick/{run_id}", pages.pick, methods=["POST"]),
        Route("/runs/{run_id}/events", pages.events), Route("/runs/{run_id}/figures/{name:path}", pages.figure),
        Mount("/static", StaticFiles(directory=STATIC)),
    ]
    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        yield
        pages.previewer.close()  # its worker process goes with the server

    handlers = {404: pages.not_found, 405: pages.not_found}
    return Guard(Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers), token)


def serve(lake: Lake, host: str = "127.0.0.1", port: int = 8765, allow_remote: bool = False,
          token: str | None = None) -> None:
    """Serve the pages until interrupted; a non-loopback host needs allow_remote and a token (UsageError)."""
    check_bind(host, allow_remote, token)
    import uvicorn

    from dsstar_lake.web.access import is_loopback

    app = build_app(lake, None if is_loopback(host) else token)
    # An open event stream would hold Ctrl-C's shutdown until its run ends: give streams a few seconds, then go.
    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False,
                timeout_graceful_shutdown=SHUTDOWN_S)
