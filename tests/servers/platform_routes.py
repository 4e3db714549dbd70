"""The ``/api/cli/*`` routes of the platform stand-in: ``(handler, body, query, token, *path args) -> dict``.

Every handler runs under the state lock; raising :class:`ApiError` answers with that status and body.
"""

from __future__ import annotations

from typing import Any

from platform_benchmarks import ROUTES as BENCHMARK_ROUTES
from platform_imports import ROUTES as IMPORT_ROUTES
from platform_state import NOW, STATE, ApiError, find, page

RUN_KEYS = {"eval": "eval_runs", "training": "training_runs"}


def verify(h: Any, body: Any, query: dict, token: dict) -> dict:
    identity = h.headers.get("X-Osmosis-Git")
    workspace = STATE.data["workspaces"].get(identity) if identity else None
    return {
        "token_id": token["token_id"],
        "user": token["user"],
        "expires_at": token["expires_at"],
        "workspace": workspace,
    }


def revoke(h: Any, body: Any, query: dict, token: dict, token_id: str) -> dict:
    for value in STATE.data["tokens"].values():
        if value["token_id"] == token_id:
            value["revoked"] = True
            return {}
    raise ApiError(404, {"error": "no such token"})


def workspaces(h: Any, body: Any, query: dict, token: dict) -> dict:
    items = [
        {**ws, "connected_repo": {"repo_full_name": identity}}
        for identity, ws in STATE.data["workspaces"].items()
    ]
    return {"workspaces": items}


def _secret_names(scope_filter: str | None = None) -> set[str]:
    return {s["name"] for s in STATE.data["secrets"] if scope_filter in (None, s["scope"])}


def create_run(kind: str, body: dict) -> dict:
    experiment = body.get("experiment_config") or {}
    missing = [k for k in ("rollout", "entrypoint", "model_path", "dataset") if not experiment.get(k)]
    if missing:
        raise ApiError(
            422,
            {
                "error": "Invalid run config",
                "issues": [{"key": f"experiment.{k}", "message": "required"} for k in missing],
            },
        )
    secrets = body.get("secrets") or {}
    absent = [
        n
        for n in secrets.get("required", [])
        if n not in _secret_names() and n not in secrets.get("provided", {})
    ]
    if absent:
        raise ApiError(404, {"error": f"Secrets not found: {', '.join(absent)}", "code": "SECRETS_NOT_FOUND"})
    run_id = STATE.next_id(kind)
    name = f"{experiment['rollout']}-{kind}-{STATE.data['counter']}"
    run = {
        "id": run_id,
        "name": name,
        "status": "pending",
        "created_at": NOW,
        "platform_url": f"https://platform.test/{kind}/{run_id}",
        "model": {"id": "m-1", "model_name": experiment["model_path"]},
        "dataset": {"id": "d-1", "file_name": experiment["dataset"]},
        "rollout": {"id": "r-1", "name": experiment["rollout"]},
        "config": body,
        "creator_name": "Ada Lovelace",
        "creator_email": "ada@example.com",
    }
    STATE.data[RUN_KEYS[kind]].append(run)
    return {k: run[k] for k in ("id", "name", "status", "created_at", "platform_url")}


def run_routes(kind: str, prefix: str) -> list[tuple[str, Any]]:
    key = RUN_KEYS[kind]

    def create(h: Any, body: Any, query: dict, token: dict) -> dict:
        return create_run(kind, body)

    def listing(h: Any, body: Any, query: dict, token: dict) -> dict:
        return page(STATE.data[key], query, key)

    def info(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
        run = find(STATE.data[key], name, "Run")
        return {"eval_run" if kind == "eval" else "training_run": run, "config": run.get("config")}

    def metrics(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
        run = find(STATE.data[key], name, "Run")
        if "metrics" not in run:
            raise ApiError(404, {"error": "no metrics yet"})
        return run["metrics"]

    def checkpoints(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
        run = find(STATE.data[key], name, "Run")
        return {
            "training_run_id": run["id"],
            "training_run_name": run["name"],
            "checkpoints": run.get("checkpoints", []),
        }

    def stop(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
        run = find(STATE.data[key], name, "Run")
        run["status"] = "stopped"
        return {}

    def logs(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
        find(STATE.data[key], name, "Run")
        entries = STATE.data["logs"].get(name, [])
        limit = int(query.get("limit", 50))
        start = int(query.get("cursor") or 0)
        chunk = entries[start : start + limit]
        more = start + limit < len(entries)
        return {"logs": chunk, "next_cursor": str(start + limit) if more else None}

    name = r"([^/]+)"
    return [
        (f"POST {prefix}", create),
        (f"GET {prefix}", listing),
        (f"GET {prefix}/{name}/metrics", metrics),
        (f"GET {prefix}/{name}/logs", logs),
        (f"GET {prefix}/{name}/checkpoints", checkpoints),
        (f"POST {prefix}/{name}/stop", stop),
        (f"GET {prefix}/{name}", info),
    ]


def manifest(h: Any, body: Any, query: dict, token: dict, run_id: str) -> dict:
    files = STATE.data["eval_files"].get(run_id)
    if files is None:
        raise ApiError(404, {"error": "no outputs"})
    types = set((query.get("types") or "metrics").split(","))
    wanted = []
    for path, text in sorted(files.items()):
        kind = "metrics" if path == "metrics.json" else path.split("/", 1)[0]
        if kind in types or (kind == "summary.jsonl" and "metrics" in types):
            wanted.append({"path": path, "size": len(text.encode())})
    return {"files": wanted, "totals": {"files": len(wanted)}}


def storage_base(h: Any) -> str:
    """Where presigned URLs point: this server, or the state's ``storage_base`` (a name only a proxy reaches)."""
    return STATE.data.get("storage_base") or f"http://127.0.0.1:{h.server.server_address[1]}"


def download_urls(h: Any, body: Any, query: dict, token: dict, run_id: str) -> dict:
    items = []
    for item in body.get("items", []):
        key = f"evals/{run_id}/{item['path']}"
        STATE.data.setdefault("blobs", {})[key] = STATE.data["eval_files"][run_id][item["path"]]
        items.append({"path": item["path"], "url": f"{storage_base(h)}/_storage/{key}"})
    return {"items": items, "expires_in": 600}


# --- secrets ---------------------------------------------------------------------------------------------


def public_secret(secret: dict) -> dict:
    return {k: v for k, v in secret.items() if k != "value"}


def list_secrets(h: Any, body: Any, query: dict, token: dict) -> dict:
    scope = query.get("scope", "all")
    items = [public_secret(s) for s in STATE.data["secrets"] if scope in ("all", s["scope"])]
    return page(items, query, "environment_secrets", platform_url="https://platform.test/secrets")


def set_secret(h: Any, body: Any, query: dict, token: dict) -> dict:
    if body.get("scope") not in ("user", "workspace"):
        raise ApiError(400, {"error": "scope must be user or workspace", "field": "scope"})
    if body.get("value") == "trigger-422":
        # What a careless server does: echo the value in its error. The CLI must redact it.
        raise ApiError(422, {"error": f"value {body['value']} rejected", "details": {"value": body["value"]}})
    for secret in STATE.data["secrets"]:
        if secret["name"] == body["name"] and secret["scope"] == body["scope"]:
            secret.update(value=body["value"], updated_at=NOW)
            return public_secret(secret)
    secret = {
        "id": STATE.next_id("sec"),
        "name": body["name"],
        "scope": body["scope"],
        "value": body["value"],
        "created_at": NOW,
        "updated_at": NOW,
        "creator_name": "Ada Lovelace",
        "updater_name": "Ada Lovelace",
    }
    STATE.data["secrets"].append(secret)
    return public_secret(secret)


def delete_secret(h: Any, body: Any, query: dict, token: dict) -> dict:
    before = len(STATE.data["secrets"])
    STATE.data["secrets"] = [
        s
        for s in STATE.data["secrets"]
        if not (s["name"] == body.get("name") and s["scope"] == body.get("scope"))
    ]
    if len(STATE.data["secrets"]) == before:
        raise ApiError(404, {"error": "Secret not found"})
    return {}


# --- datasets --------------------------------------------------------------------------------------------


def create_dataset(h: Any, body: Any, query: dict, token: dict) -> dict:
    datasets = STATE.data["datasets"]
    existing = next((d for d in datasets if d["file_name"] == body["file_name"]), None)
    if existing and body.get("overwrite_dataset_id") != existing["id"]:
        raise ApiError(
            409,
            {"error": f"Dataset '{body['file_name']}' already exists", "existing_dataset_id": existing["id"]},
        )
    if existing:
        datasets.remove(existing)
    dataset_id = STATE.next_id("ds")
    base = f"{storage_base(h)}/_storage/datasets/{dataset_id}"
    size = int(body["file_size"])
    dataset = {
        "id": dataset_id,
        "file_name": body["file_name"],
        "file_size": size,
        "status": "uploading",
        "file_format": body["extension"],
        "original_file_format": body["extension"],
        "row_count": None,
        "original_file_size": size,
        "creator_name": "Ada Lovelace",
        "created_at": NOW,
        "updated_at": NOW,
        "data_preview": [],
    }
    datasets.append(dataset)
    if size <= STATE.data["multipart_threshold"]:
        upload = {
            "method": "simple",
            "presigned_url": f"{base}/file",
            "expires_in": 600,
            "upload_headers": {},
        }
    else:
        part = STATE.data["part_size"]
        total = -(-size // part)
        upload = {
            "method": "multipart",
            "upload_id": f"up-{dataset_id}",
            "part_size": part,
            "total_parts": total,
            "expires_in": 600,
            "presigned_urls": [
                {"part_number": n, "presigned_url": f"{base}/part-{n}"} for n in range(1, total + 1)
            ],
        }
    return {**dataset, "upload": upload}


def complete_dataset(h: Any, body: Any, query: dict, token: dict, dataset_id: str) -> dict:
    dataset = find(STATE.data["datasets"], dataset_id, "Dataset")
    storage = STATE.data["storage"]
    prefix = f"datasets/{dataset_id}/"
    stored = sum(v["size"] for k, v in storage.items() if k.startswith(prefix))
    if stored != dataset["file_size"]:
        raise ApiError(400, {"error": f"uploaded {stored} bytes, expected {dataset['file_size']}"})
    if "parts" in body and len(body["parts"]) != len([k for k in storage if k.startswith(prefix)]):
        raise ApiError(400, {"error": "part list does not match the uploaded parts"})
    dataset["status"] = "uploaded"
    return dataset


def abort_dataset(h: Any, body: Any, query: dict, token: dict, dataset_id: str) -> dict:
    dataset = find(STATE.data["datasets"], dataset_id, "Dataset")
    STATE.data["datasets"].remove(dataset)
    prefix = f"datasets/{dataset_id}/"
    for key in [k for k in STATE.data["storage"] if k.startswith(prefix)]:
        del STATE.data["storage"][key]
    return {}


def dataset_logs(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
    dataset = find(STATE.data["datasets"], name, "Dataset")
    return {"logs": STATE.data["logs"].get(dataset["file_name"], []), "next_cursor": None}


def dataset_download(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
    dataset = find(STATE.data["datasets"], name, "Dataset")
    return {
        "presigned_url": f"{storage_base(h)}/_storage/datasets/{dataset['id']}/download",
        "expires_in": 600,
        "file_name": f"{dataset['file_name']}.{dataset['file_format']}",
    }


def list_datasets(h: Any, body: Any, query: dict, token: dict) -> dict:
    return page(STATE.data["datasets"], query, "datasets")


def dataset_info(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
    return find(STATE.data["datasets"], name, "Dataset")


# --- models, rollouts, serve -----------------------------------------------------------------------------


def models_base(h: Any, body: Any, query: dict, token: dict) -> dict:
    return page(STATE.data["models_base"], query, "models")


def models_lora(h: Any, body: Any, query: dict, token: dict) -> dict:
    active = sum(1 for m in STATE.data["models_lora"] if m.get("deployment_status") == "active")
    return page(
        STATE.data["models_lora"], query, "models", active_deployments=active, max_active_deployments=2
    )


def model_info(h: Any, body: Any, query: dict, token: dict, name: str) -> dict:
    return find(STATE.data["models_lora"], name, "Model")


def model_deploy(h: Any, body: Any, query: dict, token: dict, name: str, action: str) -> dict:
    model = find(STATE.data["models_lora"], name, "Model")
    model["deployment_status"] = "active" if action == "deploy" else "inactive"
    return {"id": model["id"], "model_name": model["model_name"], "status": model["deployment_status"]}


def rollouts(h: Any, body: Any, query: dict, token: dict) -> dict:
    return page(STATE.data["rollouts"], query, "rollouts")


def register(h: Any, body: Any, query: dict, token: dict) -> dict:
    STATE.data["registrations"].append(body)
    return {"id": STATE.next_id("srv"), "status": "healthy", "health_check_result": {"server_info": {}}}


ROUTES: list[tuple[str, Any]] = [
    ("GET /api/cli/verify", verify),
    ("DELETE /api/cli/tokens/([^/]+)", revoke),
    ("GET /api/cli/workspaces", workspaces),
    ("GET /api/cli/eval-runs/([^/]+)/samples/manifest", manifest),
    ("POST /api/cli/eval-runs/([^/]+)/samples/download-urls", download_urls),
    *IMPORT_ROUTES,
    *run_routes("eval", "/api/cli/eval-runs"),
    *run_routes("training", "/api/cli/training-runs"),
    ("GET /api/cli/environment-secrets", list_secrets),
    ("POST /api/cli/environment-secrets", set_secret),
    ("DELETE /api/cli/environment-secrets", delete_secret),
    ("POST /api/cli/datasets", create_dataset),
    ("GET /api/cli/datasets", list_datasets),
    ("POST /api/cli/datasets/([^/]+)/complete", complete_dataset),
    ("POST /api/cli/datasets/([^/]+)/abort", abort_dataset),
    ("GET /api/cli/datasets/([^/]+)/logs", dataset_logs),
    ("GET /api/cli/datasets/([^/]+)/download", dataset_download),
    ("GET /api/cli/datasets/([^/]+)", dataset_info),
    ("GET /api/cli/models/base", models_base),
    ("GET /api/cli/models/lora", models_lora),
    ("POST /api/cli/models/([^/]+)/(deploy|undeploy)", model_deploy),
    ("GET /api/cli/models/([^/]+)", model_info),
    ("GET /api/cli/rollouts", rollouts),
    ("POST /api/cli/rollout-server/register", register),
    *BENCHMARK_ROUTES,
]
UNSCOPED = {"verify", "revoke", "workspaces", "register", "quickstart_status", "quickstart_done"}
