"""The Starlette app of `squall ui`: Storm's UI REST API v1 under /api/v1, the web page under
/, Prometheus /metrics. Handlers are thin: a Thrift call through NimbusLink, then a pure
builder from cluster_json/topology_json.

Errors are Storm's error JSON ({"error": "<status> <reason>", "errorMessage": ...}) with a
4xx for what the caller got wrong (unknown id 404, refused 403, bad parameter 400) and 503
when no nimbus answers; never a traceback. POSTs from another site's page are refused
(browser CSRF): the UI acts with its own rights, see SECURITY.md.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from importlib import resources
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from thriftpy2.thrift import TApplicationException

from squall import thrift_api as T

from . import (
    cluster_json,
    component_json,
    jsonp,
    log_levels,
    logviewer,
    profiling,
    topology_json,
    topology_metrics_json,
    visualization,
)
from .access import AccessPolicy, credentialed, refusal
from .log_files import LogLinks
from .metrics import render_metrics
from .nimbus_link import NimbusLink, NimbusUnavailable
from .token import ensure_ui_token
from .topology_json import BadRequest

log = logging.getLogger(__name__)
REASONS = {400: "Bad Request", 403: "Forbidden", 404: "Not Found", 409: "Conflict"}
REASONS |= {413: "Content Too Large", 500: "Internal Server Error", 503: "Service Unavailable"}
MAX_BODY_BYTES = 64 * 1024  # a rebalanceOptions body is a few hundred bytes


def error_json(status: int, message: str) -> JSONResponse:
    """Storm's UIHelpers.exceptionToJson shape."""
    body = {"error": f"{status} {REASONS.get(status, '')}".strip(), "errorMessage": message}
    return JSONResponse(body, status_code=status)


def _status_of(exc: Exception) -> int | None:
    if isinstance(exc, BadRequest | T.InvalidTopologyException):
        return 400
    if isinstance(exc, T.AuthorizationException):
        return 403
    if isinstance(exc, T.NotAliveException | logviewer.NoSuchLog):
        return 404
    if isinstance(exc, T.IllegalStateException):
        return 409
    if isinstance(exc, NimbusUnavailable):
        return 503
    return None


def _message(exc: Exception) -> str:
    return str(getattr(exc, "msg", None) or getattr(exc, "message", None) or exc)


def guarded(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
    """Runs a sync handler (Starlette puts it on a thread), maps errors to Storm's JSON and
    wraps the answer for JSONP when asked (jsonp.py; a bad callback runs nothing)."""

    def endpoint(request: Request) -> Response:
        try:
            name = jsonp.callback(request.query_params, request.headers)
        except (BadRequest, jsonp.CrossSite) as exc:
            return error_json(400 if isinstance(exc, BadRequest) else 403, str(exc))
        response = answer(request)
        if name is None or response.media_type != "application/json":
            return response
        return Response(
            jsonp.wrap(name, bytes(response.body)),
            status_code=response.status_code,
            media_type=jsonp.MEDIA_TYPE,
        )

    def answer(request: Request) -> Response:
        try:
            result = handler(request)
        except Exception as exc:  # noqa: BLE001 - every failure becomes one JSON answer
            status = _status_of(exc)
            if status is None:
                if isinstance(exc, TApplicationException):
                    status = 400
                else:
                    log.exception("ui request %s failed", request.url.path)
                    return error_json(500, f"{type(exc).__name__}: {exc}")
            return error_json(status, _message(exc))
        return result if isinstance(result, Response) else JSONResponse(result)

    endpoint.__name__ = handler.__name__
    return endpoint


def _name_of(client: Any, tid: str) -> str:
    """Topology `tid`'s name (Storm's actions take the name), or NotAliveException (a 404)
    for an unknown id: getLogConfig, setLogConfig and setWorkerProfiler declare none."""
    return str(client.getTopologySummary(tid).name)


def _window(request: Request) -> str:
    return topology_json.parse_window(request.query_params.get("window"))


def _sys(request: Request) -> bool:
    return topology_json.parse_sys(request.query_params.get("sys"))


def _wait_secs(request: Request) -> int:
    raw = request.path_params["wait_time"]
    # ASCII digits only: "²".isdigit() is true and int() refuses it (a 500)
    if not re.fullmatch(r"[0-9]{1,10}", raw) or int(raw) > 2**31 - 1:
        raise BadRequest(f"wait-time must be a non-negative number of seconds; got {raw!r:.40}")
    return int(raw)


def _count(value: Any, what: str) -> int:
    """A count for nimbus (a Thrift i32): an integer in JSON, or its decimal digits as a
    string (Storm's own sample sends "5"); not true, 2.7 or "2.7"."""
    if type(value) is str and re.fullmatch(r"[0-9]{1,10}", value):
        value = int(value)
    if type(value) is not int or not 0 < value < 2**31:
        raise BadRequest(f"{what} must be a whole number from 1 to {2**31 - 1}; got {value!r:.40}")
    return value


def _rebalance_options(body: bytes, wait: int) -> Any:
    """Storm's body: {"rebalanceOptions": {"numWorkers": n, "executors": {name: n}}}."""
    options = T.RebalanceOptions(wait_secs=wait)
    if not body.strip():
        return options
    try:
        given = json.loads(body).get("rebalanceOptions") or {}
    except (ValueError, TypeError, AttributeError, RecursionError) as exc:
        raise BadRequest(f"rebalanceOptions: {exc}") from exc
    if not isinstance(given, dict):
        raise BadRequest("rebalanceOptions must be a JSON object")
    if "numWorkers" in given:
        options.num_workers = _count(given["numWorkers"], "numWorkers")
    if "executors" in given:
        executors = given["executors"]
        if not isinstance(executors, dict):
            raise BadRequest("rebalanceOptions.executors must map components to counts")
        options.num_executors = {
            str(k): _count(v, f"executors[{k!r:.40}]") for k, v in executors.items()
        }
    return options


# No other site's page may show this UI in a frame: the browser would send the client
# certificate with a click on Kill that the page lured. No address (with its ?token=) leaks
# to another site as a Referer.
NOT_FRAMED = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
}
VOUCH = "squall_vouch"  # scope state: marks the connection proven (squall/ui/server.py)


def build_app(conf: dict[str, Any], link: NimbusLink | None = None) -> Starlette:
    link = link or NimbusLink(conf)
    policy = AccessPolicy.from_conf(conf, token=ensure_ui_token(conf))
    links = LogLinks.from_conf(conf)

    def configuration(request: Request) -> Any:
        return json.loads(link.call(lambda c: c.getNimbusConf()))

    def cluster_summary(request: Request) -> Any:
        return cluster_json.cluster_summary(link.call(lambda c: c.getClusterInfo()))

    def nimbus_summary(request: Request) -> Any:
        return cluster_json.nimbus_summary(link.call(lambda c: c.getClusterInfo()).nimbuses)

    def supervisor_summary(request: Request) -> Any:
        return cluster_json.supervisor_summary(link.call(lambda c: c.getClusterInfo()).supervisors)

    def topology_summary(request: Request) -> Any:
        return cluster_json.topology_summary(link.call(lambda c: c.getTopologySummaries()))

    def topology(request: Request) -> Any:
        tid, window, sys = request.path_params["id"], _window(request), _sys(request)
        page = link.call(lambda c: c.getTopologyPageInfo(tid, window, sys))
        return topology_json.topology_page(page, window, time.time(), conf)

    def component(request: Request) -> Any:
        tid, name = request.path_params["id"], request.path_params["component"]
        window, sys = _window(request), _sys(request)

        def read(c: Any) -> tuple[Any, Any, Any]:
            owner = c.getTopologyPageInfo(tid, ":all-time", False).owner  # Storm's "user"
            page = c.getComponentPageInfo(tid, name, window, sys)
            active = c.getComponentPendingProfileActions(tid, name, T.ProfileAction.JPROFILE_STOP)
            return page, owner, active

        page, owner, active = link.call(read)
        body = component_json.component_page(
            page, window, time.time(), owner=owner or "", links=links
        )
        body["profilerActive"] = profiling.active(active, links, tid, time.time())
        return body

    def graph(request: Request) -> Any:
        tid, sys = request.path_params["id"], _sys(request)

        def read(c: Any) -> tuple[Any, Any]:
            return c.getUserTopology(tid), c.getTopologyPageInfo(tid, ":all-time", sys)

        return visualization.visualization(*link.call(read))

    def action(operation: str) -> Callable[[Request], Any]:
        def act(request: Request) -> Any:
            tid = request.path_params["id"]
            wait = _wait_secs(request) if "wait_time" in request.path_params else 0
            body = request.state.body if hasattr(request.state, "body") else b""

            def run(c: Any) -> None:
                name = _name_of(c, tid)
                if operation == "activate":
                    c.activate(name)
                elif operation == "deactivate":
                    c.deactivate(name)
                elif operation == "kill":
                    c.killTopologyWithOpts(name, T.KillOptions(wait_secs=wait))
                else:
                    c.rebalance(name, _rebalance_options(body, wait))

            link.call(run)
            return {"topologyOperation": operation, "topologyId": tid, "status": "success"}

        act.__name__ = operation
        return act

    def logconfig(request: Request) -> Any:
        tid = request.path_params["id"]

        def read(c: Any) -> Any:
            _name_of(c, tid)
            return c.getLogConfig(tid)

        return log_levels.log_config_json(link.call(read))

    def set_logconfig(request: Request) -> Any:
        tid = request.path_params["id"]
        wanted = log_levels.log_config_request(request.state.body)

        def run(c: Any) -> Any:
            _name_of(c, tid)
            c.setLogConfig(tid, wanted)
            return c.getLogConfig(tid)

        return log_levels.log_config_json(link.call(run))

    def debug(request: Request) -> Any:
        tid, params = request.path_params["id"], request.path_params
        enable, percent = log_levels.debug_request(params["action"], params["spct"])

        def run(c: Any) -> None:
            name = _name_of(c, tid)
            c.debug(name, params.get("component", ""), enable, percent)

        link.call(run)
        action = params["action"]
        return {"topologyOperation": f"debug/{action}", "topologyId": tid, "status": "success"}

    def lag(request: Request) -> Any:
        """Storm reads the lag of Kafka spouts (storm-kafka-client's) here; squall's spouts
        have none it could read: {} for a topology that exists, as Storm's for one without."""
        tid = request.path_params["id"]
        link.call(lambda c: _name_of(c, tid))
        return {}

    def metrics(request: Request) -> Response:
        return Response(render_metrics(link), media_type=CONTENT_TYPE_LATEST)

    def supervisor(request: Request) -> Any:
        """Storm's /supervisor?id= (id wins) or ?host=."""
        sid, host = request.query_params.get("id"), request.query_params.get("host")
        if not sid and not host:
            raise BadRequest("/supervisor wants an id or a host query parameter")
        sys = _sys(request)
        page = link.call(lambda c: c.getSupervisorPageInfo(sid or None, host, sys))
        return cluster_json.supervisor_page(page, links)

    def history(request: Request) -> Any:
        return cluster_json.history_summary(link.call(lambda c: c.getTopologyHistory("")))

    def owners(request: Request) -> Any:
        return cluster_json.owner_resources(link.call(lambda c: c.getOwnerResourceSummaries("")))

    def owner(request: Request) -> Any:
        name = request.path_params["owner"]

        def read(c: Any) -> tuple[Any, Any]:
            return c.getOwnerResourceSummaries(name), c.getTopologySummaries()

        found, topologies = link.call(read)
        return cluster_json.owner_resource(name, list(found), topologies)

    def topology_workers(request: Request) -> Any:
        tid = request.path_params["id"]
        info = link.call(lambda c: c.getTopologyInfo(tid))
        return cluster_json.topology_workers(info.executors or [], links.port)

    def topology_metrics(request: Request) -> Any:
        tid, window, sys = request.path_params["id"], _window(request), _sys(request)
        info = link.call(lambda c: c.getTopologyInfo(tid))
        return topology_metrics_json.topology_metrics(info, window, sys)

    def profile(action: str) -> Callable[[Request], Any]:
        def ask(request: Request) -> Any:
            tid, params = request.path_params["id"], request.path_params
            want = profiling.ask(action, params["host_port"], params.get("timeout"), time.time())
            if "dumplink" in want.answer:
                host, port = profiling.worker(params["host_port"])
                want.answer["dumplink"] = links.dumps(host, port, tid)

            def run(c: Any) -> None:
                _name_of(c, tid)
                c.setWorkerProfiler(tid, want.request)

            link.call(run)
            return want.answer

        ask.__name__ = f"profiling_{action}"
        return ask

    api = "/api/v1"
    topo = api + "/topology/{id}"
    debug_path = "/debug/{action}/{spct}"
    routes = [
        Route(api + "/cluster/configuration", guarded(configuration)),
        Route(api + "/cluster/summary", guarded(cluster_summary)),
        Route(api + "/nimbus/summary", guarded(nimbus_summary)),
        Route(api + "/supervisor/summary", guarded(supervisor_summary)),
        Route(api + "/topology/summary", guarded(topology_summary)),
        Route(topo, guarded(topology)),
        Route(topo + "/component/{component}", guarded(component)),
        Route(topo + "/visualization", guarded(graph)),
        Route(topo + "/activate", guarded(action("activate")), methods=["POST"]),
        Route(topo + "/deactivate", guarded(action("deactivate")), methods=["POST"]),
        Route(topo + "/rebalance/{wait_time}", guarded(action("rebalance")), methods=["POST"]),
        Route(topo + "/kill/{wait_time}", guarded(action("kill")), methods=["POST"]),
        Route(topo + "/metrics", guarded(topology_metrics)),
        Route(topo + "/lag", guarded(lag)),
        Route(topo + "/logconfig", guarded(logconfig), methods=["GET"]),
        Route(topo + "/logconfig", guarded(set_logconfig), methods=["POST"]),
        Route(topo + debug_path, guarded(debug), methods=["POST"]),
        Route(topo + "/component/{component}" + debug_path, guarded(debug), methods=["POST"]),
        Route(api + "/topology-workers/{id}", guarded(topology_workers)),
        Route(api + "/supervisor", guarded(supervisor)),
        Route(api + "/history/summary", guarded(history)),
        Route(api + "/owner-resources", guarded(owners)),
        Route(api + "/owner-resources/{owner}", guarded(owner)),
        *[
            Route(topo + path, guarded(profile(action)), methods=["POST"])
            for action, path in profiling.PATHS.items()
        ],
        Route(api + "/log", guarded(lambda r: logviewer.log_page(conf, r))),
        Route(api + "/download", guarded(lambda r: logviewer.download(conf, r))),
        Route(api + "/search", guarded(lambda r: logviewer.search(conf, r))),
        Route(api + "/listLogs", guarded(lambda r: logviewer.list_logs(conf, r))),
        Route(api + "/dumps/{tid}/{host_port}", guarded(lambda r: logviewer.list_dumps(conf, r))),
        Route(
            api + "/dumps/{tid}/{host_port}/{name}",
            guarded(lambda r: logviewer.dump_file(conf, r)),
        ),
        Route("/metrics", guarded(metrics)),
        Route(api + "/{rest:path}", lambda r: error_json(404, f"no such API path {r.url.path}")),
        Mount("/", StaticFiles(directory=str(resources.files("squall.ui") / "static"), html=True)),
    ]

    async def check_access(request: Request, call_next: Callable) -> Response:
        response = await admitted(request, call_next)
        response.headers.update(NOT_FRAMED)
        return response

    async def admitted(request: Request, call_next: Callable) -> Response:
        problem = refusal(policy, request)
        if problem is not None:
            status, message = problem
            refused = error_json(status, message)
            refused.headers["Connection"] = "close"  # a stranger keeps no connection open
            return refused
        vouch = (request.scope.get("state") or {}).get(VOUCH)
        if vouch is not None and credentialed(policy, request):
            vouch()
        if request.method == "POST":
            body = b""
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    return error_json(413, f"a request body is at most {MAX_BODY_BYTES} bytes")
            request.state.body = body
        return await call_next(request)

    return Starlette(
        routes=routes, middleware=[Middleware(BaseHTTPMiddleware, dispatch=check_access)]
    )
