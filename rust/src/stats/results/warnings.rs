//! Every warning of the result model, worded here and nowhere else: each surface prints `message` as
//! it is, so the CLI, `-o`, the report page and compare say the same line.

use serde::Serialize;

/// One thing a reader of the numbers must know. `code` is stable for scripts; `message` is the line
/// every surface prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    pub code: &'static str,
    pub message: String,
    /// The model the warning is about ("primary", "baseline", ...), if one.
    pub model_tag: Option<String>,
    /// The score name (eval function, rubric, grader) it is about, if one.
    pub function: Option<String>,
    /// The count it is about (missing runs, errored runs), if one.
    pub count: Option<u64>,
}

/// `12345` as `12,345`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

/// "baseline: " for a compared model, nothing for the primary one.
fn prefix(tag: &str) -> String {
    if tag == "primary" {
        String::new()
    } else {
        format!("{tag}: ")
    }
}

/// Rows of the plan that are short of n: `unstarted` of them hold no finished run at all (a Ctrl+C before
/// they were reached), `short` hold some.
#[derive(Debug, Clone, Copy)]
pub struct ShortRows {
    pub unstarted: u64,
    pub short: u64,
}

pub fn incomplete(tag: &str, missing: u64, planned: u64, rows: ShortRows, n: u64) -> Warning {
    let which = if rows.unstarted == 0 {
        format!("{} short of n = {n}", plural(rows.short, "row", "rows"))
    } else {
        format!(
            "{} with no finished run, {} short of n = {n}",
            plural(rows.unstarted, "row", "rows"),
            grouped(rows.short)
        )
    };
    Warning {
        code: "incomplete",
        message: format!(
            "{}incomplete log: {} of {} planned runs are missing ({which}); pass@k counts \
             them as did not pass, the observed-only value is given beside it",
            prefix(tag),
            grouped(missing),
            grouped(planned),
        ),
        model_tag: Some(tag.to_string()),
        function: None,
        count: Some(missing),
    }
}

pub fn n_undeclared(min_attempts: u64) -> Warning {
    Warning {
        code: "n_undeclared",
        message: format!(
            "the log does not declare n (runs per row): missing runs cannot be counted, and pass@k goes \
             up to the fewest runs of a row ({min_attempts})"
        ),
        model_tag: None,
        function: None,
        count: None,
    }
}

pub fn nothing_scored(tag: &str, function: &str, errored: u64, unscored: u64) -> Warning {
    Warning {
        code: "nothing_scored",
        message: format!(
            "{}{function}: no run was scored ({} errored, {} unscored): its mean and pass rates are n/a",
            prefix(tag),
            grouped(errored),
            grouped(unscored),
        ),
        model_tag: Some(tag.to_string()),
        function: Some(function.to_string()),
        count: Some(0),
    }
}

pub fn function_errors(tag: &str, function: &str, runs: u64, rows: u64) -> Warning {
    Warning {
        code: "function_errors",
        message: format!(
            "{}{function} raised on {} across {}: those runs are errored and in none of its statistics",
            prefix(tag),
            plural(runs, "run", "runs"),
            plural(rows, "row", "rows"),
        ),
        model_tag: Some(tag.to_string()),
        function: Some(function.to_string()),
        count: Some(runs),
    }
}

pub fn run_errors(tag: &str, runs: u64, finished: u64) -> Warning {
    Warning {
        code: "run_errors",
        message: format!(
            "{}{} of {} errored (the agent, the provider or a timeout) and have no score",
            prefix(tag),
            grouped(runs),
            plural(finished, "run", "runs"),
        ),
        model_tag: Some(tag.to_string()),
        function: None,
        count: Some(runs),
    }
}

pub fn durations_unrecorded(runs: u64) -> Warning {
    Warning {
        code: "durations_unrecorded",
        message: format!(
            "wall time and CPU are n/a: {} recorded without invocation times (an earlier version, or a \
             layout that does not keep them)",
            plural(runs, "run was", "runs were"),
        ),
        model_tag: None,
        function: None,
        count: Some(runs),
    }
}

/// A warning of one side of a comparison, prefixed with the side ("A: ...").
pub fn side(label: &str, warning: &Warning) -> Warning {
    Warning {
        message: format!("{label}: {}", warning.message),
        ..warning.clone()
    }
}

pub fn n_differs(n_a: u64, n_b: u64) -> Warning {
    let (low, high, side) = if n_a < n_b {
        (n_a, n_b, "B")
    } else {
        (n_b, n_a, "A")
    };
    Warning {
        code: "n_differs",
        message: format!(
            "A has n = {n_a} runs per row, B n = {n_b}: pass@k is compared for k up to {low}, each side's \
             estimate over all its runs (nothing is cut); {side}'s pass@k up to {high} is in its own summary"
        ),
        model_tag: None,
        function: None,
        count: None,
    }
}

pub fn rows_differ(rows_a: u64, rows_b: u64, matched: u64, by: &str) -> Warning {
    Warning {
        code: "rows_differ",
        message: format!(
            "A has {} and B {}; the comparison is over the {} matched by {by}",
            plural(rows_a, "row", "rows"),
            grouped(rows_b),
            grouped(matched),
        ),
        model_tag: None,
        function: None,
        count: Some(matched),
    }
}

pub fn multiplicity(tested: usize, alpha: f64) -> Warning {
    Warning {
        code: "multiplicity",
        message: format!(
            "{tested} statistics were tested on the same rows; a verdict needs its Holm-adjusted p-value \
             below {alpha} and McNemar's test to agree"
        ),
        model_tag: None,
        function: None,
        count: Some(tested as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_and_counted() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(1234567), "1,234,567");
        let rows = ShortRows {
            unstarted: 0,
            short: 150,
        };
        let w = incomplete("primary", 300, 100_000, rows, 4);
        assert!(w.message.starts_with(
            "incomplete log: 300 of 100,000 planned runs are missing (150 rows short"
        ));
        assert_eq!(w.count, Some(300));
        let rows = ShortRows {
            unstarted: 3,
            short: 0,
        };
        let w = incomplete("primary", 12, 20, rows, 4);
        assert!(w.message.starts_with(
            "incomplete log: 12 of 20 planned runs are missing (3 rows with no finished run, 0 short of n = 4)"
        ));
        let w = function_errors("baseline", "m:f", 1, 1);
        assert_eq!(
            w.message,
            "baseline: m:f raised on 1 run across 1 row: those runs are errored and in none of its statistics"
        );
    }
}
