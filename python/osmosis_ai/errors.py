"""The exception hierarchy of osmosis-ai.

Every error we raise derives from :class:`OsmosisError` and, where one fits, from the stdlib class a
user would already catch (``ValueError`` for bad input files, ``TypeError`` for contract breaches,
``RuntimeError`` for provider failures). The names users of the established package catch are kept.
The Rust core raises these classes too (see ``rust/src/py/errors.rs``), so this module stays pure Python.
"""

from __future__ import annotations

# `typing` would cost `import osmosis_ai` about as much as the rest of the package's import: the usual
# guard, without the import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from osmosis_ai.config import ConfigIssue

__all__ = [
    "AgentLoopNotFoundError",
    "CLIError",
    "ConfigError",
    "ConfigValidationError",
    "DatasetFormatError",
    "DatasetParseError",
    "DatasetValidationError",
    "EvalFnError",
    "MCPLoadError",
    "MissingAPIKeyError",
    "MissingExtraError",
    "ModelNotFoundError",
    "OptionsError",
    "OsmosisError",
    "OsmosisRolloutError",
    "OsmosisServerError",
    "OsmosisTimeoutError",
    "OsmosisTransportError",
    "OsmosisValidationError",
    "OutputPathError",
    "ProviderError",
    "ProviderRequestError",
    "ResultsLogError",
    "RubricRecordsError",
    "RunError",
    "SignatureError",
    "StatsError",
    "SystemicProviderError",
    "ToolArgumentError",
    "ToolExecutionError",
    "ToolValidationError",
    "WorkspaceError",
]


class OsmosisError(Exception):
    """Base class of every error raised by osmosis-ai."""


class CLIError(OsmosisError):
    """A command cannot go on; the CLI prints the message without a traceback and exits 1.

    The keyword arguments are the established 0.3 ones (``osmosis_ai.cli.errors.CLIError``).

    Attributes:
        code: A machine-readable error code (default ``"VALIDATION"``).
        details: Extra structured information, if any.
        request_id: The platform request this error came from, if any.
    """

    def __init__(
        self,
        message: str = "",
        *,
        code: str = "VALIDATION",
        details: dict[str, object] | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.details = details
        self.request_id = request_id


# --- output files -------------------------------------------------------------------------------------


class OutputPathError(OsmosisError, ValueError):
    """A results file cannot be written where asked (``-o``): a directory, a device, a FIFO or a socket,
    or a place that is not writable. Raised before anything runs; the message names the path."""


# --- runs -------------------------------------------------------------------------------------------------


class RunError(CLIError):
    """A run (``eval``, ``eval run``, a rubric evaluation, ``grade``, a probe) cannot start or go on.

    Raised by the library's run modules for what the caller gave or what they found: a missing file, a
    selection past the end of a dataset, a run directory another process holds. It derives from
    :class:`CLIError` only so that code catching the established name keeps catching what it caught.

    A message may name fields of the run's options object as ``{field}`` (listed in ``fields``);
    ``str()`` shows the field names, and :meth:`render` lets a front end show its own names for them
    (the CLI shows its flags).

    Attributes:
        fields: The options fields the message names.

    Example:
        >>> error = RunError("{dataset_file} data.csv: no such file", fields=("dataset_file",))
        >>> str(error), error.render({"dataset_file": "--dataset-file"})
        ('dataset_file data.csv: no such file', '--dataset-file data.csv: no such file')
    """

    def __init__(
        self,
        message: str = "",
        *,
        fields: tuple[str, ...] = (),
        code: str = "VALIDATION",
        details: dict[str, object] | None = None,
    ) -> None:
        self.template = message
        self.fields = tuple(fields)
        super().__init__(self.render({}), code=code, details=details)

    def render(self, names: dict[str, str]) -> str:
        """The message with each ``{field}`` shown as ``names[field]`` (else the field's own name)."""
        text = self.template
        for field in self.fields:
            text = text.replace("{" + field + "}", names.get(field, field))
        return text


class OptionsError(RunError, ValueError):
    """A run's options object is invalid on its own: a value out of range, or options that exclude
    each other. Found before anything is loaded or run."""


class ResultsLogError(RunError, ValueError):
    """A results log cannot be created, read or resumed: bad JSON, another kind of log, another config."""


class WorkspaceError(RunError):
    """A workspace cannot be changed as asked (``init``, ``template apply``, ``doctor --fix``): a file
    exists, a path leaves the workspace, a symlink is in the way (``code`` ``CONFLICT``)."""


class MissingExtraError(OsmosisError, ModuleNotFoundError):
    """A feature needs an optional extra that is not installed; the message says what to install.

    A ``ModuleNotFoundError`` whose ``name`` is the missing module, as the established package raises.

    Attributes:
        extra: The extra to install (``pip install "osmosis-ai[<extra>]"``).
        module: The missing module.
    """

    def __init__(self, message: str, *, extra: str, module: str) -> None:
        super().__init__(message, name=module)
        self.extra = extra
        self.module = module


# --- input files --------------------------------------------------------------------------------------


class DatasetFormatError(OsmosisError, ValueError):
    """A dataset file cannot be read: bad syntax, wrong shape, unsupported format.

    Attributes:
        path: The file, when known.
        line: The 1-based line (or Parquet row) of the problem, when known.
        field: The column or key involved, when known.
        row: The 0-based index of the row among the file's rows (blank lines not counted), when known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
        row: int | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.field = field
        self.row = row


class DatasetParseError(DatasetFormatError):
    """A dataset file is not valid JSON / JSONL / CSV / Parquet (established name)."""


class DatasetValidationError(DatasetFormatError):
    """A dataset row breaks the row contract: missing, null, empty or non-string field (established name)."""


class RubricRecordsError(DatasetFormatError, CLIError):
    """An ``eval-rubric`` records file cannot be loaded through the 0.2 ``cli_services.DatasetLoader``.

    The established loader raised ``CLIError`` there, so this one is both: ``except CLIError`` in existing
    code catches it, and it carries the file, line and field of a :class:`DatasetFormatError` (whose
    ``__init__`` hands the message on to :class:`CLIError`'s, which sets ``code="VALIDATION"``).
    """


class ConfigError(OsmosisError, ValueError):
    """A configuration file (TOML, YAML) is invalid."""


class StatsError(OsmosisError, ValueError):
    """Statistics input out of range: n, c or k of pass@k, or a NaN / infinite score.

    Attributes:
        row: The 0-based row at fault, when one row is.
        field: The argument involved (``"n"``, ``"c"``, ``"k"``, ``"ks"``, ``"scores"``, ...), when known.
    """

    def __init__(self, message: str, *, row: int | str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.row = int(row) if row is not None else None
        self.field = field


class ConfigValidationError(ConfigError):
    """An eval/training config has problems; all of them are listed, each with file, line and column.

    Attributes:
        path: The config file.
        issues: The problems, as ``osmosis_ai.config.ConfigIssue`` objects (``str()`` of one is
            ``path:line:column: key: message``).
    """

    def __init__(
        self, message: str, *, path: str | None = None, issues: list[ConfigIssue] | None = None
    ) -> None:
        super().__init__(message)
        self.path = path
        self.issues = list(issues or [])


# --- functions users hand us ----------------------------------------------------------------------------


class SignatureError(OsmosisError, TypeError):
    """A reward, rubric or eval function breaks its signature or return contract.

    Attributes:
        function: The function's name.
        parameter: The parameter at fault, if the problem is one parameter.
        expected: What the contract expected there.
    """

    def __init__(
        self,
        message: str,
        *,
        function: str | None = None,
        parameter: str | None = None,
        expected: str | None = None,
    ) -> None:
        super().__init__(message)
        self.function = function
        self.parameter = parameter
        self.expected = expected


class EvalFnError(OsmosisError):
    """An eval function cannot be loaded or returned something unusable (established name)."""


class ToolValidationError(OsmosisError):
    """An agent's tool definition is invalid (established name)."""


class MCPLoadError(OsmosisError):
    """An MCP tool folder (``--mcp DIR``) cannot be loaded: no ``main.py``, an import error, no server
    object, or tools that cannot be listed (established name). The message names the file at fault."""


# --- LLM providers -------------------------------------------------------------------------------------


class MissingAPIKeyError(OsmosisError, RuntimeError):
    """No API key could be resolved for a provider (established name)."""


class ProviderRequestError(OsmosisError, RuntimeError):
    """A request to an LLM provider failed (established name and attributes).

    Args:
        provider: The provider name, such as ``"openai"``.
        model: The model id.
        detail: What went wrong; stripped, with a fallback text when empty.
    """

    def __init__(self, provider: str, model: str, detail: str) -> None:
        self.provider = provider
        self.model = model
        self.detail = (detail or "").strip() or "The provider request failed with no additional detail."
        super().__init__(f"Provider '{provider}' request for model '{model}' failed. {self.detail}")


class ModelNotFoundError(ProviderRequestError):
    """The provider does not know the model id, or the key has no access to it (established name)."""


class ProviderError(OsmosisError):
    """An LLM call made during an agent run failed (established name)."""


class SystemicProviderError(ProviderError):
    """A provider failure that every further call would repeat (auth, connection, 401/403/404)."""


# --- remote rollout ------------------------------------------------------------------------------------


class OsmosisRolloutError(OsmosisError):
    """Base class of the remote-rollout errors (established name)."""


class OsmosisTransportError(OsmosisRolloutError):
    """A request to the trainer could not be delivered."""


class OsmosisServerError(OsmosisRolloutError):
    """The trainer answered with a 5xx status."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class OsmosisValidationError(OsmosisRolloutError):
    """The trainer rejected a request (4xx) or answered with an unexpected status."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class OsmosisTimeoutError(OsmosisRolloutError):
    """A request to the trainer timed out."""


class AgentLoopNotFoundError(OsmosisRolloutError):
    """No agent loop is registered under the name asked for."""

    def __init__(self, name: str, available: list[str] | None = None) -> None:
        self.name = name
        self.available = list(available or [])
        super().__init__(f"Agent loop '{name}' not found. Available: {self.available}")


class ToolExecutionError(OsmosisRolloutError):
    """A tool call failed while an agent ran."""

    def __init__(self, message: str, tool_call_id: str = "", tool_name: str = "") -> None:
        super().__init__(message)
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name


class ToolArgumentError(ToolExecutionError):
    """A tool call's arguments could not be parsed or did not fit the tool."""
