"""The installed distribution satisfies the pins users' projects carry, with the extras they type."""

from __future__ import annotations

import importlib.metadata

import pytest
from packaging import requirements

import osmosis_ai


@pytest.mark.parametrize(
    "pin",
    [
        "osmosis-ai>=0.2.17",  # 0.2-era repositories
        "osmosis-ai[server]>=0.2.11",  # the remote-rollout example
        "osmosis-ai[server]>=0.3.0rc1,<0.4",  # what the 0.3 rollout scaffold writes
    ],
)
def test_installed_version_satisfies_users_pins(pin: str) -> None:
    requirement = requirements.Requirement(pin)
    installed = importlib.metadata.version("osmosis-ai")
    assert installed == osmosis_ai.__version__
    assert requirement.specifier.contains(installed, prereleases=True)
    assert requirement.extras <= set(importlib.metadata.metadata("osmosis-ai").get_all("Provides-Extra"))


def test_litellm_is_a_range_not_a_pin() -> None:
    (litellm,) = [
        requirements.Requirement(r)
        for r in importlib.metadata.requires("osmosis-ai") or []
        if requirements.Requirement(r).name == "litellm"
    ]
    operators = {spec.operator for spec in litellm.specifier}
    assert "==" not in operators and ">=" in operators
    assert litellm.specifier.contains(importlib.metadata.version("litellm"))


def test_version_is_a_0_3_release_above_the_newest_established_one() -> None:
    from packaging.version import Version

    assert Version("0.3.8") < Version(osmosis_ai.__version__) < Version("0.4")
