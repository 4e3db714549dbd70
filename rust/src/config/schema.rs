//! The field tables of both config kinds: which sections exist, their keys, and each value's rule.

/// What a value must be. Numeric rules are stricter than the established SDK (which forwards values
/// unchecked to the platform): a config that would fail there fails here first, with a line number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// A non-empty string.
    Text,
    /// `experiment.rollout`: one directory name under `rollouts/`.
    RolloutName,
    /// `experiment.entrypoint`: a `.py` path inside the rollout directory.
    Entrypoint,
    /// `experiment.branch`: non-empty, no whitespace.
    Branch,
    /// `experiment.commit_sha`: 7-40 hex digits.
    CommitSha,
    /// An integer >= 1.
    PositiveInt,
    /// A finite number > 0 (integers accepted).
    PositiveNumber,
    /// A finite number >= 0.
    NonNegativeNumber,
    /// A finite number, any sign.
    FiniteNumber,
    /// A finite number in (0, 1].
    UnitInterval,
    /// An integer >= 0.
    NonNegativeInt,
    /// A secret record's name: `^[A-Z][A-Z0-9_]*$`.
    SecretName,
}

pub struct Field {
    pub name: &'static str,
    pub rule: Rule,
    pub required: bool,
    /// The largest value a numeric rule accepts: beyond it a value is a typo (`n = 9223372036854775807`,
    /// a 1e308 s timeout) that would overflow or never end downstream. Same maxima as the CLI's options.
    pub max: f64,
}

const fn req(name: &'static str, rule: Rule) -> Field {
    Field {
        name,
        rule,
        required: true,
        max: f64::INFINITY,
    }
}

const fn opt(name: &'static str, rule: Rule) -> Field {
    Field {
        name,
        rule,
        required: false,
        max: f64::INFINITY,
    }
}

impl Field {
    const fn upto(self, max: f64) -> Field {
        Field { max, ..self }
    }
}

/// Runs per row (the CLI's --n), items in flight (--batch-size), seconds (a week), tokens, steps.
const MAX_RUNS: f64 = 10_000.0;
const MAX_CONCURRENCY: f64 = 1024.0;
const MAX_TIMEOUT_S: f64 = 7.0 * 24.0 * 3600.0;
const MAX_TOKENS: f64 = 10_000_000.0;
const MAX_STEPS: f64 = 1_000_000_000.0;

/// A section whose keys are all known (unknown keys are reported).
pub struct Section {
    pub name: &'static str,
    pub fields: &'static [Field],
}

pub const EXPERIMENT: Section = Section {
    name: "experiment",
    fields: &[
        req("rollout", Rule::RolloutName),
        req("entrypoint", Rule::Entrypoint),
        req("model_path", Rule::Text),
        req("dataset", Rule::Text),
        opt("branch", Rule::Branch),
        opt("commit_sha", Rule::CommitSha),
    ],
};

pub const EVALUATION: Section = Section {
    name: "evaluation",
    fields: &[
        opt("limit", Rule::PositiveInt).upto(MAX_STEPS),
        opt("n", Rule::PositiveInt).upto(MAX_RUNS),
        opt("batch_size", Rule::PositiveInt).upto(MAX_CONCURRENCY),
        opt("pass_threshold", Rule::FiniteNumber),
        opt("agent_workflow_timeout_s", Rule::PositiveNumber).upto(MAX_TIMEOUT_S),
        opt("grader_timeout_s", Rule::PositiveNumber).upto(MAX_TIMEOUT_S),
    ],
};

pub const TRAINING: Section = Section {
    name: "training",
    fields: &[
        opt("lr", Rule::PositiveNumber).upto(10.0),
        opt("total_epochs", Rule::PositiveInt).upto(MAX_RUNS),
        opt("n_samples_per_prompt", Rule::PositiveInt).upto(MAX_RUNS),
        opt("rollout_batch_size", Rule::PositiveInt).upto(MAX_STEPS),
        opt("max_prompt_length", Rule::PositiveInt).upto(MAX_TOKENS),
        opt("max_response_length", Rule::PositiveInt).upto(MAX_TOKENS),
        opt("agent_workflow_timeout_s", Rule::PositiveNumber).upto(MAX_TIMEOUT_S),
        opt("grader_timeout_s", Rule::PositiveNumber).upto(MAX_TIMEOUT_S),
    ],
};

pub const SAMPLING: Section = Section {
    name: "sampling",
    fields: &[
        opt("rollout_temperature", Rule::NonNegativeNumber).upto(2.0),
        opt("rollout_top_p", Rule::UnitInterval),
    ],
};

pub const CHECKPOINTS: Section = Section {
    name: "checkpoints",
    fields: &[
        opt("eval_interval", Rule::PositiveInt).upto(MAX_STEPS),
        opt("checkpoint_save_freq", Rule::PositiveInt).upto(MAX_STEPS),
    ],
};

/// `[experiment]` of a benchmark config (`configs/benchmark/*.toml`).
pub const BENCHMARK_EXPERIMENT: Section = Section {
    name: "experiment",
    fields: &[req("benchmark", Rule::Text)],
};

/// `[execution]` of a benchmark config: the platform runner's knobs.
pub const EXECUTION: Section = Section {
    name: "execution",
    fields: &[
        opt("attempts_per_task", Rule::PositiveInt).upto(MAX_RUNS),
        opt("max_concurrent_attempts", Rule::PositiveInt).upto(MAX_CONCURRENCY),
        opt("timeout_multiplier", Rule::PositiveNumber).upto(MAX_RUNS),
        opt("max_retries", Rule::NonNegativeInt).upto(MAX_RUNS),
        opt("pass_threshold", Rule::FiniteNumber),
        opt("judge_model", Rule::Text),
        opt("judge_api_key_secret", Rule::SecretName),
    ],
};

/// The sections with special rules, allowed in both kinds.
pub const ADVANCED: &str = "advanced";
/// Benchmark configs only: task selection, the agents, the verifier's secrets.
pub const TASKS: &str = "tasks";
pub const AGENTS: &str = "agents";
pub const VERIFIER: &str = "verifier";
pub const ENV: &str = "env";
pub const SECRETS: &str = "secrets";

/// Which config a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Eval,
    Training,
    /// `configs/benchmark/*.toml` (`osmosis benchmark submit`); checked by `benchmark.rs`.
    Benchmark,
}

impl Kind {
    pub fn parse(text: &str) -> Option<Kind> {
        match text {
            "eval" => Some(Kind::Eval),
            "training" | "train" => Some(Kind::Training),
            "benchmark" => Some(Kind::Benchmark),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Eval => "eval",
            Kind::Training => "training",
            Kind::Benchmark => "benchmark",
        }
    }

    /// "an eval" / "a training", for messages.
    pub fn with_article(self) -> &'static str {
        match self {
            Kind::Eval => "an eval",
            Kind::Training => "a training",
            Kind::Benchmark => "a benchmark",
        }
    }

    /// The sections with field tables, `[experiment]` first, in the order they are checked.
    pub fn sections(self) -> &'static [Section] {
        match self {
            Kind::Eval => &[EXPERIMENT, EVALUATION],
            Kind::Training => &[EXPERIMENT, TRAINING, SAMPLING, CHECKPOINTS],
            Kind::Benchmark => &[BENCHMARK_EXPERIMENT, EXECUTION],
        }
    }

    /// Every top-level name this kind accepts.
    pub fn top_level(self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.sections().iter().map(|s| s.name).collect();
        if self == Kind::Benchmark {
            names.extend([TASKS, AGENTS, VERIFIER, ENV, SECRETS]);
        } else {
            names.extend([ADVANCED, ENV, SECRETS]);
        }
        names
    }

    /// `[secrets]` must be present (eval) or may be omitted (training).
    pub fn requires_secrets(self) -> bool {
        self == Kind::Eval
    }

    /// The kind a misplaced section or key most likely belongs to (a benchmark config has none).
    pub fn other(self) -> Kind {
        match self {
            Kind::Eval => Kind::Training,
            Kind::Training => Kind::Eval,
            Kind::Benchmark => Kind::Benchmark,
        }
    }
}
