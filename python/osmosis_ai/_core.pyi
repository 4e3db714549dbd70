"""Type stub of the compiled core `osmosis_ai._core` (built from `rust/src/py/`)."""

from collections.abc import Sequence
from typing import Any, Literal, TypedDict, final

__all__ = [
    "ATIF_VERSION",
    "COMPARISON_SCHEMA",
    "EVAL_ROW_FIELDS",
    "EVAL_RUN_INDEX_KEYS",
    "RESULTS_LOG_FORMATS",
    "RESULT_SCHEMA",
    "ROW_OUTCOMES",
    "RUBRIC_RUN_FIELDS",
    "RUN_OUTCOMES",
    "Blake2b",
    "DatasetBatches",
    "EvalOutputRows",
    "EvalRunItems",
    "LogRecordFields",
    "RubricOutputRecords",
    "SecretMasker",
    "StatsAggregator",
    "__version__",
    "advantage_sign_changes",
    "agreement",
    "blake2b_hexdigest",
    "build_profile",
    "check_atif",
    "check_atif_files",
    "check_rows",
    "check_signature",
    "compare_results",
    "count_rows",
    "estimate_many",
    "flat_message_copies",
    "holm_adjust",
    "latest_run_offsets",
    "mcnemar_exact",
    "median",
    "pass_at_k",
    "pass_hat_k",
    "quantiles",
    "response_framing",
    "result_model",
    "result_model_with_rows",
    "results_declared_runs",
    "results_index_base",
    "row_interval",
    "scan_chat_records",
    "student_t_quantile",
    "summarize_results_file",
    "validate_config_files",
    "validate_config_text",
    "validate_dataset",
    "wilson_interval",
    "write_trajectory",
]

__version__: str

def build_profile() -> str:
    """``"release"`` or ``"debug"``: how the core was compiled."""

def response_framing(head: bytes) -> tuple[int, dict[str, str], int | None, bool, bool] | None:
    """``(status, headers, content_length, chunked, keep_alive)`` of an HTTP/1.1 answer head (without its
    blank line) as ``osmosis_ai.llm.http1_connection`` reads one, header names lower-cased and values
    stripped; None unless the head is plain printable ASCII with a numeric status and a ``Content-Length``,
    if it has one, of digits (the Python reader then reads it)."""

def check_signature(
    shape_json: str, family: str
) -> Literal["reward", "rubric", "eval_simple", "eval_full", "custom"]:
    """Check a function shape (JSON from ``signatures.describe_function``) against the contract its family
    (``"reward"``, ``"rubric"`` or ``"eval"``) selects by first parameter name.

    Returns the contract name (``"reward"``, ``"rubric"``, ``"eval_simple"``, ``"eval_full"``, or ``"custom"``
    for a decorated function whose first parameter is not ``solution_str`` and which is not a full-mode eval
    function: accepted unchecked, as the established decorators do).
    Raises ``osmosis_ai.errors.SignatureError`` when the function breaks it.
    """

# --- statistics (rust/src/py/stats.rs) -----------------------------------------------------------------
# Arrays travel as (bytes, code): native-endian packed values and a type code ("i8", "u4", "f8", "b1", ...).

def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k of one row, ``1 - C(n-c, k) / C(n, k)``; raises ``StatsError`` on invalid n, c, k."""

def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one row, ``C(c, k) / C(n, k)``; raises ``StatsError`` on invalid n, c, k."""

def estimate_many(
    estimator: str,
    n: int | tuple[bytes, str],
    c: tuple[bytes, str],
    k: int,
    per_row: bool = False,
    row_offset: int = 0,
) -> tuple[float, int, bytes | None]:
    """``estimator`` ("pass_at_k" / "pass_hat_k") over rows: (sum over rows, rows, packed f64 per-row
    values when ``per_row``). Raises ``StatsError`` naming the first bad row, numbered from
    ``row_offset``."""

def mcnemar_exact(b: int, c: int) -> float:
    """McNemar's exact two-sided p-value for ``b`` first-only and ``c`` second-only passes."""

def results_declared_runs(header: str) -> int | None:
    """The runs per row a results log header (its JSON text) declares by the reader's rule (config ``n``,
    ``number`` or ``n_runs``; 1 for grade and probe logs), None when it declares none."""

def results_index_base(kind: str | None, index_base: int | None, by_package: bool) -> int:
    """What a results log's ``row_index`` / ``run_index`` count from, given its header's ``kind``,
    ``index_base`` and whether it names an ``osmosis_version``: ``index_base`` when present, else 1 for a
    rubric log an earlier version of the package wrote, else 0."""

def median(values: Sequence[float]) -> float | None:
    """The median of the scores (the mean of the two middle ones for an even count); None for none."""

def quantiles(values: bytes, code: str, qs: list[float]) -> list[float] | None:
    """The ``qs`` quantiles of packed values, linear between order statistics (None for no values).
    Raises ``StatsError`` for a NaN or infinite value or a q outside [0, 1]."""

def row_interval(
    values: bytes,
    code: str,
    method: str,
    level: float,
    z: float,
    resamples: int,
    seed: int,
    weights: tuple[bytes, str] | None = None,
) -> tuple[float, float, float] | None:
    """(estimate, low, high) of ``sum(values) / sum(weights or 1)`` over rows, by "bootstrap", "normal"
    (``estimate ± z·se``, cut to [0, 1] when every row's ratio lies there) or "t" (``z`` is Student's t
    quantile at the rows of nonzero weight, less 1); None with fewer than 2 rows of nonzero weight."""

RESULTS_LOG_FORMATS: list[str]
"""The results log header formats ``summarize_results_file`` reads, newest last."""

def advantage_sign_changes(
    old: list[float], new: list[float], lengths: list[int]
) -> tuple[int, int, int, list[int]]:
    """Groups of runs (``lengths`` consecutive scores each) whose group-relative advantage signs differ
    between two scorings: ``(groups, groups_changed, runs_changed, changed group indices)``. Raises
    ``StatsError`` on mismatched lengths or a non-finite score."""

def agreement(judge: list[float], gold: list[float], threshold: float) -> dict[str, Any]:
    """``{count, mae, bias, spearman, kappa}`` of judge scores against gold labels (kappa of
    ``score >= threshold``; spearman / kappa None when undefined). Raises ``StatsError`` on bad input."""

RESULT_SCHEMA: tuple[str, int]
"""``(name, version)`` of the result model's JSON form (``result_model``)."""

COMPARISON_SCHEMA: tuple[str, int]
"""``(name, version)`` of a comparison's JSON form (``compare_results``)."""

RUN_OUTCOMES: list[tuple[str, str]]
"""What a run was for a score name, ``(JSON key, printed word)``: errored, unscored, passed, did not pass."""

ROW_OUTCOMES: list[tuple[str, str]]
"""What a row was, ``(JSON key, printed words)``, in the order a row is sorted into them."""

def result_model(
    path: str,
    pass_threshold: float | None = None,
    n_runs: int | None = None,
    failed: str | None = None,
    level: float = 0.95,
    per_row: bool = False,
) -> str:
    """The result model of a results file in any layout, as JSON (schema ``RESULT_SCHEMA``); ``None``
    options are taken from the file; ``per_row`` adds each row's statistics per score name. Raises
    ``StatsError`` naming path, line and field on a bad record."""

def compare_results(
    a: str,
    b: str,
    metric: str | None = None,
    allow_partial: bool = False,
    level: float = 0.95,
    method: str = "t",
    resamples: int = 1000,
    seed: int = 0,
) -> str:
    """Two results files compared on their shared rows, as JSON (schema ``COMPARISON_SCHEMA``). Raises
    ``StatsError`` when the rows differ (without ``allow_partial``), fewer than 2 match, or the metric is
    missing."""

def student_t_quantile(p: float, df: float) -> float:
    """Student's t quantile: the ``t`` with ``P(T <= t) = p`` (``0 < p < 1``, ``df > 0``)."""

def wilson_interval(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's score interval ``(low, high)`` for proportion ``p`` over ``n`` (possibly effective)
    trials at normal quantile ``z``."""

def holm_adjust(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""

def summarize_results_file(
    path: str,
    pass_threshold: float | None = None,
    thresholds: list[float] = ...,
    ks: list[int] | None = None,
    n_runs: int | None = None,
    failed: str | None = None,
    nonfinite: str = "error",
    keep_rows: bool = True,
) -> dict[str, Any]:
    """A results file in any layout (results log, bare records, eval or eval-rubric ``-o`` JSON):
    ``{layout, kind, config_json, pass_threshold, n_runs, failed, models: [(tag, counters,
    [(name, StatsAggregator, first error messages)])]}``, primary model (tag "") first. ``None``
    options are taken from the file. Raises ``FileNotFoundError`` / ``PermissionError`` / ``OSError``
    on I/O failures and ``StatsError`` naming path, line and field on a bad record."""

class _AggregatorSummary(TypedDict):
    """What ``StatsAggregator.finish`` returns (stub only: at run time a plain dict)."""

    rows: int
    count: int
    failed: int
    padded: int
    errors: int
    mean: float | None
    variance: float | None
    std: float | None
    sample_variance: float | None
    sample_std: float | None
    min: float | None
    max: float | None
    min_attempts: int
    max_attempts: int
    pass_threshold: float
    ks: list[int]
    pass_at_k: list[float]
    pass_hat_k: list[float]
    pass_rows: list[int]
    mixed_fraction: list[tuple[float, float]]

@final
class LogRecordFields:
    """``(line number, record)`` of each complete, non-blank line of a results log: from line 2 on, a JSON
    object line as a dict of only those of ``fields`` it has (the rest checked, never built); line 1 and
    any line that is not one valid JSON object as its raw bytes. A last line without a newline is not
    given. ``dataset=True`` reads a JSONL dataset instead: line 1 is a record too, and so is a last line
    without a newline. Raises ``OSError`` when the file cannot be read."""

    def __new__(cls, path: str, fields: list[str], *, dataset: bool = False) -> LogRecordFields: ...
    def __iter__(self) -> LogRecordFields: ...
    def __next__(self) -> tuple[int, dict[str, Any] | bytes]: ...

def latest_run_offsets(path: str, runs_per_row: int | None = None) -> tuple[bytes, bytes] | None:
    """A results log's line 1 and where the latest line of each (row, run) starts, in row then run order,
    packed as native 64-bit integers; None when a record line does not begin as the engine writes it
    (``{"row_key":"...","row_index":R,"run_index":K,``) or an index is negative. Raises ``OSError``."""

@final
class StatsAggregator:
    """The streaming aggregator behind ``osmosis_ai.stats.Aggregator``."""

    def __new__(
        cls,
        pass_threshold: float = 1.0,
        thresholds: list[float] = ...,
        ks: list[int] | None = None,
        n_runs: int | None = None,
        failed: str = "zero",
        nonfinite: str = "error",
        keep_rows: bool = True,
    ) -> StatsAggregator: ...
    def push(
        self,
        scores: list[float | None] | tuple[float | None, ...],
        row_index: int | None = None,
        errors: int = 0,
    ) -> None:
        """Adds one row of attempt scores (None = failed attempt) and ``errors`` attempts whose scorer raised."""
    def push_matrix(self, data: bytes, code: str, rows: int, cols: int) -> None:
        """Adds ``rows`` rows of ``cols`` attempts from a packed row-major matrix."""
    def __len__(self) -> int: ...
    def mixed_rows(self, threshold: float) -> list[int]:
        """Row indices with 0 < c < n at a tracked threshold."""
    def finish(self) -> _AggregatorSummary:
        """The summary as a dict; ``sample_variance`` and ``sample_std`` are None below two scores, and
        ``pass_at_k``, ``pass_hat_k``, ``pass_rows`` are aligned with ``ks``."""
    def compare(
        self,
        other: StatsAggregator,
        ks: list[int],
        method: str,
        level: float,
        resamples: int,
        seed: int,
    ) -> tuple[int, list[tuple[str, tuple[float, float, float] | None]]]:
        """Paired intervals of ``self - other`` over the rows both hold: (paired rows, [(name, interval)]);
        "normal" is Student's t, inside [-1, 1] when both sides' rows lie in [0, 1]."""
    def intervals(
        self, ks: list[int], method: str, level: float, resamples: int, seed: int
    ) -> list[tuple[str, tuple[float, float, float] | None]]:
        """Intervals over rows for "mean", "pass_at_<k>" and "pass_hat_<k>"; "normal" is Student's t,
        inside [0, 1] when every row's value lies there."""
    def model_intervals(self, level: float) -> str:
        """The result model's intervals over these rows as JSON ``{name: {estimate, low, high, level,
        method, rows, effective_n, note}}``: the mean's (Student t), each pass rate's (Wilson)."""
    def paired_differences(self, other: StatsAggregator, ks: list[int], level: float) -> str:
        """The comparison model's paired differences ``other - self`` (Student t) over the rows both hold,
        as JSON ``{name: {estimate, a, b, low, high, level, method, p_value, p_holm, verdict, note}}``."""

# --- datasets (rust/src/py/dataset.rs) ------------------------------------------------------------------

@final
class SecretMasker:
    """The secrets a process knows (longest first), searched for with one SIMD search each; the search
    behind :mod:`osmosis_ai.redact`. Each secret is replaced everywhere by ``***``, in the order given, in
    the text the earlier ones left: what ``for s in secrets: text = text.replace(s, "***")`` gives.
    """

    def __new__(cls, secrets: list[str]) -> SecretMasker: ...
    def mask_bytes(self, data: bytes) -> bytes:
        """UTF-8 ``data`` masked: the same object when no secret occurs. Raises ``UnicodeDecodeError``."""
    def mask_text(self, text: str) -> str:
        """``text`` masked: the same object when no secret occurs. Raises ``UnicodeEncodeError`` for lone
        surrogates."""

@final
class DatasetBatches:
    """Iterator over batches (lists of row dicts) of a dataset file, checked against a row contract.

    ``contract`` is ``"eval"``, ``"rubric"``, ``"eval_run"`` or ``"any"``. Opening skips ``offset`` rows; at most
    ``limit`` rows are read. Raises ``FileNotFoundError``, ``osmosis_ai.errors.DatasetParseError`` or
    ``osmosis_ai.errors.DatasetValidationError``.
    """

    def __new__(
        cls,
        path: str,
        contract: str = "eval",
        offset: int = 0,
        limit: int | None = None,
        batch_size: int = 1024,
        read_ahead: bool = True,
    ) -> DatasetBatches: ...
    @property
    def format(self) -> str:
        """``"jsonl"``, ``"json"``, ``"csv"`` or ``"parquet"``."""
    def __iter__(self) -> DatasetBatches: ...
    def __next__(self) -> list[dict[str, object]]: ...

def count_rows(path: str) -> int:
    """Rows in a dataset file: non-blank lines (JSONL), the footer (Parquet), a syntax pass (JSON, CSV)."""

class _DatasetProblem(TypedDict):
    """One problem of ``validate_dataset`` (stub only: at run time a plain dict)."""

    line: int | None
    unit: str
    row: int | None
    field: str | None
    message: str
    location: str
    kind: str

class _DatasetReport(TypedDict):
    """What ``validate_dataset`` returns (stub only: at run time a plain dict)."""

    path: str
    format: str
    rows: int
    columns: list[str]
    total_problems: int
    bad_rows: int
    problems: list[_DatasetProblem]

def validate_dataset(path: str, contract: str = "eval", max_problems: int = 100) -> _DatasetReport:
    """Checks every row; returns its report, with up to ``max_problems`` problems."""

def check_rows(path: str, contract: str = "eval", offset: int = 0, limit: int | None = None) -> int:
    """The rows of a ``DatasetBatches`` window, checked against ``contract`` without building any: their
    number, or the error iterating them would raise first."""

def validate_config_text(text: str, path: str, kind: str) -> dict[str, Any]:
    """Validate config text (``kind`` is ``"eval"``, ``"training"`` or ``"benchmark"``; ``path`` labels the
    report). Returns the report as a dict: ``{path, kind, issues: [{line, column, key, message,
    suggestion?}], config, positions}`` where ``config`` is None unless there are no issues and
    ``positions`` maps checked keys (``"experiment.rollout"``) to ``[line, column]``.
    """

def validate_config_files(paths: list[str], kinds: list[str]) -> list[dict[str, Any]]:
    """Read and validate many config files (``kinds[i]`` for ``paths[i]``) with the GIL released.
    Returns one report dict per file; a file that cannot be read gives
    ``{path, io_error: {kind, message}}`` with kind ``not_found``, ``permission_denied``,
    ``is_a_directory`` or ``other``.
    """

# --- ATIF trajectories (rust/src/py/atif.rs) ------------------------------------------------------------

ATIF_VERSION: str
"""The ATIF version this package writes (``"ATIF-v1.7"``)."""

EVAL_RUN_INDEX_KEYS: list[str]
"""The fields of an ``eval run`` ``index.jsonl`` line, in their order (the core's and Python's writers)."""

def check_atif(data: bytes) -> tuple[str, Any, Any, Any]:
    """Parse and strictly check one ATIF document (JSON text) with the GIL released.

    Returns ``("valid", rollout_id, row_index, run_index)`` (each None when the document does not say) or
    ``("invalid", field, message, None)`` naming the first field at fault (``""``: the whole document).
    """

@final
class EvalRunItems:
    """The end of one ``eval run`` invocation: the latest results log lines at ``starts``, each as
    ``(offset, fields, conversation, document, index_line, written)`` (see :mod:`osmosis_ai.atif`)."""

    def __new__(
        cls,
        path: str,
        starts: Any,
        carried: Any,
        resumed: Any,
        model_name: str | None,
        version: str,
        files: tuple[str, str] | None = None,
        masker: SecretMasker | None = None,
    ) -> EvalRunItems: ...
    def __iter__(self) -> EvalRunItems: ...
    def __next__(self) -> tuple[int, dict[str, Any] | None, bool, bytes | None, bytes | None, bool]: ...

def write_trajectory(trial_dir: str, target: str, data: bytes) -> None:
    """Write ``<trial_dir>/trajectory.json`` (making the folder) and hard-link ``target`` to it, with the
    GIL released. Raises ``OSError`` naming ``trial_dir``."""

def check_atif_files(paths: list[str]) -> list[tuple[str, Any, Any, Any]]:
    """Read and check many ATIF files, in order, with the GIL released: one tuple per path as
    :func:`check_atif` gives, or ``("unreadable", kind, message, None)`` with kind ``not_found``,
    ``permission_denied``, ``is_a_directory`` or ``other``.
    """

EVAL_ROW_FIELDS: list[str]
"""The record fields a run of ``osmosis eval``'s ``-o`` rows is made of, in the order they are read."""

@final
class EvalOutputRows:
    """The text of the ``rows`` list of ``osmosis eval``'s ``-o`` file, laid out from its results log (line
    1, the header, is skipped: numbered from 0) as ``osmosis_ai.eval.summary.iter_rows`` and
    ``json_block`` would: bytes of whole rows, each after its separator (``[\n    `` before the first,
    ``,\n    `` before the others), four spaces deeper. ``None`` (and nothing after it) when a record
    cannot be written byte for byte that way; ``rows`` counts the rows given so far. Raises ``OSError``
    when the file cannot be read."""

    def __new__(cls, path: str, runs_per_row: int, with_tags: bool) -> EvalOutputRows: ...
    def __iter__(self) -> EvalOutputRows: ...
    def __next__(self) -> bytes | None: ...
    @property
    def rows(self) -> int: ...

def result_model_with_rows(
    path: str,
    runs_per_row: int,
    with_tags: bool,
    pass_threshold: float | None = None,
    n_runs: int | None = None,
    failed: str | None = None,
    level: float = 0.95,
) -> tuple[str, EvalOutputRows | None]:
    """``result_model``'s JSON and, laid out in the same pass over the log (one read and parse of each line),
    its ``-o`` rows as ``EvalOutputRows(path, runs_per_row, with_tags)`` would give them; ``None`` for the
    rows when the file is not a results log numbered from 0 or they could not be held (past 1 MiB the text
    goes to an unnamed file beside the log). Raises as ``result_model`` does."""

def scan_chat_records(path: str) -> tuple[int, bytes]:
    """``(records, unsure)``: the non-blank lines of an ``eval rubric`` chat JSONL file, and, packed as
    native 64-bit integers, ``(line, record index, byte offset)`` (both from 1, the offset from 0) of each
    line the core's check could not vouch for: Python reads those and accepts them or raises. Raises
    ``OSError``."""

def blake2b_hexdigest(data: bytes, digest_size: int) -> str:
    """``hashlib.blake2b(data, digest_size=digest_size).hexdigest()`` (SIMD). Raises ``ValueError`` for a
    ``digest_size`` outside 1 to 64 (``OverflowError`` for one no machine integer holds)."""

@final
class Blake2b:
    """``hashlib.blake2b(digest_size=...)``'s ``update`` and ``hexdigest`` (SIMD; ``update`` releases the
    GIL). Raises ``ValueError`` for a ``digest_size`` outside 1 to 64 (``OverflowError`` for one no
    machine integer holds)."""

    def __new__(cls, digest_size: int) -> Blake2b: ...
    def update(self, data: bytes) -> None: ...
    def hexdigest(self) -> str: ...

@final
class RubricOutputRecords:
    """The text of the ``records`` list of ``osmosis eval rubric``'s ``-o`` document (0.3's layout), laid out
    from the chat dataset at ``dataset`` and the latest runs of the results log at ``log`` (None: no
    runs; a log numbered from 0, ``number`` runs a record) as ``osmosis_ai.rubric.document`` would:
    ``(text, report, records)`` of whole records, ``text`` each after its separator (``[\n    `` before the
    first, ``,\n    `` before the others) four spaces deeper, ``report`` their console report as
    ``osmosis_ai.rubric.report.RecordEcho`` makes it (records joined by newlines; empty without
    ``report``). ``None`` (and nothing after it) when a record cannot be written byte for byte that way.
    Raises ``OSError`` when a file cannot be read."""

    def __new__(cls, dataset: str, log: str | None, number: int, report: bool) -> RubricOutputRecords: ...
    def __iter__(self) -> RubricOutputRecords: ...
    def __next__(self) -> tuple[bytes, str, int] | None: ...
    def health(self) -> list[int]:
        """``[runs, successes, unscored, errors, clamps, parse_failures, retries, attempts, prompt_tokens,
        completion_tokens, total_tokens]`` of the runs of the records laid out so far."""

RUBRIC_RUN_FIELDS: list[str]
"""The per-run fields of a rubric results document's runs, in its order (``RubricOutputRecords`` writes
them so; ``osmosis_ai.rubric.engine.RUN_FIELDS`` is this list)."""

def flat_message_copies(messages: object) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """Two new lists, each of a shallow copy of every message, when ``messages`` is a ``list`` of ``dict``\\ s
    with ``str`` keys and values that are ``None`` or exactly ``str``, ``int``, ``float`` or ``bool`` (a
    shallow copy is then ``rollout.sample.plain_copy``'s deep one); else ``None``."""
