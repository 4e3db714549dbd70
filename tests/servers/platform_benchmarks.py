"""Benchmark, quickstart and dev-server routes of the platform stand-in.

State keys: ``benchmarks`` (catalog records, key = ``source_ref``), ``benchmark_runs``, ``benchmark_files``
(run id -> {path: text}), ``quickstart`` (workspace id -> {repo, billing_ready, completed, polls_until_
connected}) and ``dev_servers``.
"""

from __future__ import annotations

import json
from typing import Any

from platform_state import NOW, STATE, ApiError, find, page


def _benchmark(key: str) -> dict[str, Any]:
    for bench in STATE.data["benchmarks"]:
        if key in (bench.get("source_ref"), bench.get("id")):
            return bench
    raise ApiError(404, {"error": f"Benchmark '{key}' not found", "code": "NOT_FOUND"})


def list_benchmarks(h: Any, body: Any, query: dict, token: dict) -> dict:
    return page(STATE.data["benchmarks"], query, "benchmarks")


def benchmark_info(h: Any, body: Any, query: dict, token: dict, key: str) -> dict:
    bench = _benchmark(key)
    return {"benchmark": bench, "leaderboard": bench.get("leaderboard", [])}


def submit_run(h: Any, body: Any, query: dict, token: dict) -> dict:
    bench = _benchmark(str((body.get("experiment_config") or {}).get("benchmark")))
    agents = body.get("agents")
    if not isinstance(agents, list) or not 1 <= len(agents) <= 8:
        raise ApiError(400, {"error": "agents must list 1 to 8 agents", "field": "agents"})
    secrets = body.get("secrets") or {}
    stored = {s["name"] for s in STATE.data["secrets"]}
    absent = [
        n for n in secrets.get("required", []) if n not in stored and n not in secrets.get("provided", {})
    ]
    if absent:
        raise ApiError(404, {"error": f"Secrets not found: {', '.join(absent)}", "code": "SECRETS_NOT_FOUND"})
    run_id = STATE.next_id("bench")
    run = {
        "id": run_id,
        "name": f"{bench['source_ref']}-{STATE.data['counter']}",
        "status": "pending",
        "created_at": NOW,
        "benchmark": {"id": bench["id"], "name": bench["name"]},
        "agent_count": len(agents),
        "best_pass_at_1": None,
        "ingested_results": 0,
        "expected_results": bench["task_count"] * len(agents),
        "creator_name": "Ada Lovelace",
        "creator_email": "ada@example.com",
        "platform_url": f"https://platform.test/benchmark-runs/{run_id}",
        "config": body,
    }
    STATE.data["benchmark_runs"].append(run)
    answer = {k: run[k] for k in ("id", "name", "status", "created_at", "platform_url")}
    return {**answer, "workflow_id": f"wf-{run_id}", "task_count": bench["task_count"]}


def list_runs(h: Any, body: Any, query: dict, token: dict) -> dict:
    runs = STATE.data["benchmark_runs"]
    if query.get("benchmark"):
        runs = [r for r in runs if r["benchmark"]["id"] == query["benchmark"]]
    return page([{k: v for k, v in r.items() if k != "config"} for r in runs], query, "benchmark_runs")


def run_info(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
    run = find(STATE.data["benchmark_runs"], name, "Benchmark run")
    config = run.get("config") or {}
    return {
        "benchmark_run": {k: v for k, v in run.items() if k != "config"},
        "configuration": {k: v for k, v in config.items() if k != "secrets"},
        "agents": config.get("agents", []),
        "totals": {"results": run["ingested_results"]},
        "agent_metrics": [],
    }


def run_logs(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
    run = find(STATE.data["benchmark_runs"], name, "Benchmark run")
    entries = STATE.data["logs"].get(run["name"], [])
    limit, start = int(query.get("limit", 50)), int(query.get("cursor") or 0)
    more = start + limit < len(entries)
    return {"logs": entries[start : start + limit], "next_cursor": str(start + limit) if more else None}


def stop_run(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
    find(STATE.data["benchmark_runs"], name, "Benchmark run")["status"] = "stopped"
    return {}


def _category(path: str) -> str | None:
    fixed = {"summary.csv": "summary", "results.csv": "results", "logs.txt": "logs"}
    return fixed.get(path) or ("artifacts" if path.startswith("artifacts/") else None)


def outputs_manifest(h: Any, body: Any, query: dict, token: dict, run_id: str) -> dict:
    files = STATE.data["benchmark_files"].get(run_id)
    if files is None:
        raise ApiError(404, {"error": "no outputs"})
    types = set((query.get("types") or "").split(","))
    wanted = [{"path": p, "size": len(t.encode())} for p, t in sorted(files.items()) if _category(p) in types]
    return {"files": wanted, "totals": {"files": len(wanted)}}


def outputs_urls(h: Any, body: Any, query: dict, token: dict, run_id: str) -> dict:
    port = h.server.server_address[1]
    items = []
    for item in body.get("items", []):
        key = f"benchmarks/{run_id}/{item['path']}"
        STATE.data.setdefault("blobs", {})[key] = STATE.data["benchmark_files"][run_id][item["path"]]
        items.append({"path": item["path"], "presigned_url": f"http://127.0.0.1:{port}/_storage/{key}"})
    return {"items": items, "expires_in": 600}


def dev_up(h: Any, body: Any, query: dict, token: dict) -> dict:
    missing = [k for k in ("rollout_name", "commit_sha", "repository_path", "entrypoint") if not body.get(k)]
    if missing or "ttl_hours" not in body:
        raise ApiError(400, {"error": f"missing {missing or ['ttl_hours']}"})
    server_id = STATE.next_id("dev")
    server = {
        "id": server_id,
        "name": body["rollout_name"],
        "url": f"https://dev.test/{server_id}",
        "status": "provisioning",
        "expires_at": None if body["ttl_hours"] is None else "2026-11-26T12:00:00+00:00",
        "started_at": NOW,
        "request": body,
    }
    STATE.data["dev_servers"].append(server)
    return {**{k: v for k, v in server.items() if k != "request"}, "api_key": f"devkey-{server_id}"}


def dev_list(h: Any, body: Any, query: dict, token: dict) -> dict:
    return page(STATE.data["dev_servers"], query, "dev_rollout_servers")


def dev_down(h: Any, body: Any, query: dict, token: dict, server_id: str) -> dict:
    server = find(STATE.data["dev_servers"], server_id, "Dev server")
    server["status"] = "stopping"
    return {"id": server_id, "status": "stopping"}


def dev_logs(h: Any, body: Any, query: dict, token: dict, server_id: str) -> dict:
    find(STATE.data["dev_servers"], server_id, "Dev server")
    entries = STATE.data["logs"].get(server_id, [])
    return {"logs": entries[-int(query.get("limit", 50)) :], "next_cursor": None}


def dev_stream(h: Any, body: Any, query: dict, token: dict, server_id: str) -> tuple[bytes, dict]:
    """The last ``tail`` entries as events, with a heartbeat and a broken event among them; then the end."""
    find(STATE.data["dev_servers"], server_id, "Dev server")
    entries = STATE.data["logs"].get(server_id, [])[-int(query.get("tail", 100)) :]
    events = [": heartbeat\n\n", "data: {not json\n\n"]
    events += [f"data: {json.dumps(entry)}\n\n" for entry in entries]
    return "".join(events).encode(), {"Content-Type": "text/event-stream"}


def _setup(workspace_id: str) -> dict[str, Any]:
    """A workspace's quickstart state; its repository is connected unless the test says otherwise."""
    identity = next((i for i, ws in STATE.data["workspaces"].items() if ws["id"] == workspace_id), None)
    if identity is None:
        raise ApiError(404, {"error": f"Workspace '{workspace_id}' not found", "code": "NOT_FOUND"})
    default = {"connected": True, "full_name": identity, "billing_ready": True, "completed": False}
    return STATE.data["quickstart"].setdefault(workspace_id, default)


def quickstart_status(h: Any, body: Any, query: dict, token: dict) -> dict:
    setup = _setup(str(query.get("organizationId")))
    connected = setup["connected"]
    return {
        "repo": {"connected": connected, "full_name": setup["full_name"] if connected else None},
        "billing_ready": setup["billing_ready"],
        "completed": setup["completed"],
    }


def quickstart_done(h: Any, body: Any, query: dict, token: dict) -> dict:
    if body.get("intent") not in ("train", "eval", "benchmark", "explore"):
        raise ApiError(400, {"error": "unknown intent", "field": "intent"})
    setup = _setup(str(body.get("organizationId")))
    setup.update(completed=True, intent=body["intent"])
    return {}


ROUTES: list[tuple[str, Any]] = [
    ("GET /api/cli/quickstart", quickstart_status),
    ("POST /api/cli/quickstart", quickstart_done),
    ("POST /api/cli/dev-rollout-server", dev_up),
    ("GET /api/cli/dev-rollout-server", dev_list),
    ("DELETE /api/cli/dev-rollout-server/([^/]+)", dev_down),
    ("GET /api/cli/dev-rollout-server/([^/]+)/logs", dev_logs),
    ("GET /api/cli/dev-rollout-server/([^/]+)/logs/stream", dev_stream),
    ("GET /api/cli/benchmarks", list_benchmarks),
    ("GET /api/cli/benchmarks/([^/]+)", benchmark_info),
    ("POST /api/cli/benchmark-runs", submit_run),
    ("GET /api/cli/benchmark-runs", list_runs),
    ("GET /api/cli/benchmark-runs/([^/]+)/logs", run_logs),
    ("POST /api/cli/benchmark-runs/([^/]+)/stop", stop_run),
    ("GET /api/cli/benchmark-runs/([^/]+)/outputs/manifest", outputs_manifest),
    ("POST /api/cli/benchmark-runs/([^/]+)/outputs/download-urls", outputs_urls),
    ("GET /api/cli/benchmark-runs/([^/]+)", run_info),
]
