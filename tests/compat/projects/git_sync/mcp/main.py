"""The tool folder's entry point, as the documented local-rollout layout has it (`--mcp ./mcp`)."""

import tools.math  # noqa: F401  (registers the tools on the server)
from server import mcp

if __name__ == "__main__":
    mcp.run(transport="http", host="127.0.0.1", port=8080)
