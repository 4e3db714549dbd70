"""The Osmosis platform: HTTP client, credentials, workspace identity, and one module per resource.

Nothing is imported here eagerly: ``httpx`` and ``keyring`` load only inside the commands that talk to the
platform, so ``osmosis --help`` stays fast. Import the submodules directly
(``from osmosis_ai.platform.client import PlatformClient``).
"""
