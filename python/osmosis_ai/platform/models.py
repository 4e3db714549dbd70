"""Models (base and LoRA) and rollouts on the platform: list, inspect, deploy, undeploy."""

from __future__ import annotations

from typing import Any

from osmosis_ai.platform.client import PlatformClient, segment
from osmosis_ai.platform.pages import Page, fetch_all, fetch_page

__all__ = ["BASE_FIELDS", "LORA_FIELDS", "deploy", "get_model", "list_models", "list_rollouts"]

BASE_FIELDS = ("id", "model_name", "base_model", "creator_name", "created_at", "updated_at")
LORA_FIELDS = (
    "id",
    "model_name",
    "base_model",
    "training_run_name",
    "checkpoint_step",
    "reward",
    "created_at",
)
DEPLOYMENT_FIELDS = ("deployment_status", "deployed_at", "deployed_by")
ROLLOUT_FIELDS = ("id", "name", "is_active", "repo_full_name", "last_synced_commit_sha", "created_at")


def _item(record: dict[str, Any], fields: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    item = {k: record.get(k) for k in fields}
    # Deployment keys are shown only when the platform sends them (older platforms do not).
    item.update({k: record[k] for k in optional if k in record})
    return item


def list_models(client: PlatformClient, kind: str, *, limit: int = 50, every: bool = False) -> Page:
    """Base (``kind="base"``) or LoRA (``kind="lora"``) models; LoRA pages carry deployment counts."""
    path = f"/api/cli/models/{kind}"
    page = fetch_all(client, path, "models") if every else fetch_page(client, path, "models", limit=limit)
    if kind == "base":
        page.items = [_item(m, BASE_FIELDS) for m in page.items]
    else:
        page.items = [_item(m, LORA_FIELDS, DEPLOYMENT_FIELDS) for m in page.items]
    return page


def get_model(client: PlatformClient, name: str) -> dict[str, Any]:
    """A LoRA model's record (by name or id)."""
    return client.get(f"/api/cli/models/{segment(name)}")


def deploy(client: PlatformClient, name: str, *, undeploy: bool = False) -> dict[str, Any]:
    """Deploys (or undeploys) a LoRA model; idempotent on the platform. Returns ``{id, model_name, status}``."""
    action = "undeploy" if undeploy else "deploy"
    return client.post(f"/api/cli/models/{segment(name)}/{action}", {}, idempotent=True)


def list_rollouts(
    client: PlatformClient, *, branch: str | None = None, limit: int = 50, every: bool = False
) -> Page:
    """The rollouts the platform synced from the connected repository."""
    params = {"branch": branch} if branch else None
    path = "/api/cli/rollouts"
    page = (
        fetch_all(client, path, "rollouts", params=params)
        if every
        else (fetch_page(client, path, "rollouts", limit=limit, params=params))
    )
    page.items = [_item(r, ROLLOUT_FIELDS) for r in page.items]
    return page
