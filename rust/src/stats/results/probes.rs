//! `reward probe`'s findings, from a probe log: per probed function, how often each negative control
//! scored at least as high as the row's best-scoring format of the correct answer while that answer
//! reached the threshold (a gameable reward), and how often the correct answer in a common format scored
//! below it (too strict). A row where no format of the correct answer reaches the threshold cannot test a
//! control (the reward pays nothing it could be compared with): it is counted apart as untestable, never
//! as a row where the control did not pass.
//!
//! A probe log's scores are keyed `"<function>@<probe>"`: the probe `correct` is the answer as written,
//! `correct_*` the same answer in another format, any other probe a negative control. A row where a
//! score a finding needs is missing (the function raised, the probe did not apply to the row, the run
//! errored) is left out of that finding and counted as skipped.

use super::attempt::Score;
use serde::Serialize;

/// The probe of the answer as written; `correct_*` are its other formats.
const CORRECT: &str = "correct";
/// Rows kept as examples per finding (the first ones, in file order).
const EXAMPLES: usize = 3;

/// A row where a finding hit, and the probe (control or format) it hit with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeExample {
    pub row: u64,
    pub probe: String,
    /// For a control: the format of the correct answer it was compared with (the best-scoring one).
    pub reference: Option<String>,
}

/// One function on one probe (or format, or `correct` for the too-strict check over every format).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeCount {
    pub probe: String,
    /// Rows where the scores it needs exist.
    pub rows: u64,
    /// Of those, rows where the control passed (or the correct format scored below the threshold).
    pub hits: u64,
    /// Rows without a score it needs.
    pub skipped: u64,
    /// Controls only: rows where both were scored but no format of the correct answer reached the
    /// threshold, so the control could not be compared (left out of `rows`).
    pub untestable: u64,
    /// `hits / rows`; None when no row counts (never 0 for "nothing measured").
    pub fraction: Option<f64>,
    pub examples: Vec<ProbeExample>,
}

impl ProbeCount {
    fn new(probe: &str) -> Self {
        Self {
            probe: probe.to_string(),
            rows: 0,
            hits: 0,
            skipped: 0,
            untestable: 0,
            fraction: None,
            examples: Vec::new(),
        }
    }

    fn count(&mut self, hit: bool, row: u64, probe: &str, reference: Option<&str>) {
        self.rows += 1;
        self.hits += u64::from(hit);
        if hit && self.examples.len() < EXAMPLES {
            self.examples.push(ProbeExample {
                row,
                probe: probe.to_string(),
                reference: reference.map(str::to_string),
            });
        }
    }

    fn finish(mut self) -> Self {
        self.fraction = (self.rows > 0).then(|| self.hits as f64 / self.rows as f64);
        self
    }
}

/// Every finding of one probed function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionProbes {
    pub function: String,
    /// One per control, in the order the log first names them.
    pub controls: Vec<ProbeCount>,
    /// Rows where the correct answer in at least one format scored below the threshold, over the rows
    /// where at least one format was scored; its examples name the first such format.
    pub too_strict: ProbeCount,
    /// One per format of the correct answer (`correct` first when the log names it first).
    pub formats: Vec<ProbeCount>,
}

#[derive(Debug, Clone)]
struct FunctionTally {
    /// `(score name index, finding)`.
    controls: Vec<(usize, ProbeCount)>,
    formats: Vec<(usize, ProbeCount)>,
    result: FunctionProbes,
}

/// The running findings of a probe log's functions, one row at a time.
#[derive(Debug, Clone)]
pub struct ProbeTally {
    threshold: f64,
    functions: Vec<FunctionTally>,
}

fn score(scores: &[Score], i: usize) -> Option<f64> {
    match scores.get(i) {
        Some(Score::Scored(x)) if x.is_finite() => Some(*x),
        _ => None,
    }
}

impl ProbeTally {
    /// Findings for each of `functions` over the score `names` of the log.
    pub fn new(functions: &[String], names: &[String], threshold: f64) -> Self {
        let functions = functions
            .iter()
            .map(|function| {
                let prefix = format!("{function}@");
                let mut tally = FunctionTally {
                    controls: Vec::new(),
                    formats: Vec::new(),
                    result: FunctionProbes {
                        function: function.clone(),
                        controls: Vec::new(),
                        too_strict: ProbeCount::new(CORRECT),
                        formats: Vec::new(),
                    },
                };
                for (i, name) in names.iter().enumerate() {
                    let Some(probe) = name.strip_prefix(&prefix) else {
                        continue;
                    };
                    if probe == CORRECT || probe.starts_with("correct_") {
                        tally.formats.push((i, ProbeCount::new(probe)));
                    } else {
                        tally.controls.push((i, ProbeCount::new(probe)));
                    }
                }
                tally
            })
            .collect();
        Self {
            threshold,
            functions,
        }
    }

    /// One row's scores (its one run), by score name index.
    pub(crate) fn add_row(&mut self, row: u64, scores: &[Score]) {
        let threshold = self.threshold;
        for f in &mut self.functions {
            let mut first_low: Option<String> = None;
            // The best-scoring format (the first of equals): what a control must reach to be paid like
            // the answer. A reward that reads only `#### x` is tested against `#### x`.
            let mut best: Option<(f64, String)> = None;
            for (i, finding) in &mut f.formats {
                let Some(x) = score(scores, *i) else {
                    finding.skipped += 1;
                    continue;
                };
                if !matches!(&best, Some((b, _)) if *b >= x) {
                    best = Some((x, finding.probe.clone()));
                }
                if x < threshold && first_low.is_none() {
                    first_low = Some(finding.probe.clone());
                }
                let probe = finding.probe.clone();
                finding.count(x < threshold, row, &probe, None);
            }
            let strict = &mut f.result.too_strict;
            match (best.is_some(), first_low) {
                (false, _) => strict.skipped += 1,
                (true, low) => {
                    strict.count(low.is_some(), row, low.as_deref().unwrap_or(CORRECT), None)
                }
            }
            for (i, finding) in &mut f.controls {
                match (score(scores, *i), &best) {
                    (Some(control), Some((correct, format))) if *correct >= threshold => {
                        let probe = finding.probe.clone();
                        finding.count(control >= *correct, row, &probe, Some(format));
                    }
                    (Some(_), Some(_)) => finding.untestable += 1,
                    _ => finding.skipped += 1,
                }
            }
        }
    }

    pub fn finish(self) -> Vec<FunctionProbes> {
        self.functions
            .into_iter()
            .map(|f| FunctionProbes {
                controls: f.controls.into_iter().map(|(_, c)| c.finish()).collect(),
                formats: f.formats.into_iter().map(|(_, c)| c.finish()).collect(),
                too_strict: f.result.too_strict.finish(),
                function: f.result.function,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_control_passes_only_against_a_correct_answer_that_passes() {
        let names = strings(&["f@correct", "f@correct_boxed", "f@empty", "f@echo"]);
        let mut tally = ProbeTally::new(&strings(&["f"]), &names, 0.5);
        let s = Score::Scored;
        tally.add_row(0, &[s(1.0), s(0.0), s(1.0), s(0.0)]);
        tally.add_row(1, &[s(0.2), s(0.2), s(0.2), Score::Errored]);
        tally.add_row(2, &[Score::Errored, s(1.0), s(1.0), Score::Unscored]);
        let f = &tally.finish()[0];
        let empty = &f.controls[0];
        // Row 1: no format reaches 0.5, nothing to compare with; row 2: compared with `correct_boxed`.
        assert_eq!(
            (
                empty.probe.as_str(),
                empty.rows,
                empty.hits,
                empty.skipped,
                empty.untestable
            ),
            ("empty", 2, 2, 0, 1)
        );
        assert_eq!(empty.fraction, Some(1.0));
        assert_eq!(
            empty.examples,
            vec![
                ProbeExample {
                    row: 0,
                    probe: "empty".into(),
                    reference: Some("correct".into())
                },
                ProbeExample {
                    row: 2,
                    probe: "empty".into(),
                    reference: Some("correct_boxed".into())
                }
            ]
        );
        let echo = &f.controls[1];
        assert_eq!((echo.rows, echo.skipped, echo.fraction), (1, 2, Some(0.0)));
        let strict = &f.too_strict;
        assert_eq!((strict.rows, strict.hits, strict.skipped), (3, 2, 0));
        assert_eq!(strict.examples[0].probe, "correct_boxed");
        assert_eq!(strict.examples[1].probe, "correct");
        assert_eq!((f.formats[0].rows, f.formats[0].skipped), (2, 1));
    }

    #[test]
    fn no_counted_row_is_no_fraction() {
        let names = strings(&["f@correct", "f@empty"]);
        let mut tally = ProbeTally::new(&strings(&["f"]), &names, 0.5);
        tally.add_row(0, &[Score::Errored, Score::Errored]);
        let f = &tally.finish()[0];
        assert_eq!(
            (f.controls[0].fraction, f.too_strict.fraction),
            (None, None)
        );
        assert_eq!(f.too_strict.skipped, 1);
    }

    #[test]
    fn a_reward_paying_only_another_format_is_tested_against_that_format() {
        // The answer as written scores 0; `#### x` scores 1. A reward paying the empty answer is caught,
        // one paying no control is tested (0 of 2), not waved through on rows it could not test.
        let names = strings(&["f@correct", "f@correct_hashes", "f@empty", "f@echo"]);
        let mut tally = ProbeTally::new(&strings(&["f"]), &names, 0.5);
        let s = Score::Scored;
        tally.add_row(0, &[s(0.0), s(1.0), s(1.0), s(0.0)]);
        tally.add_row(1, &[s(0.0), s(1.0), s(1.0), s(0.0)]);
        let f = &tally.finish()[0];
        let (empty, echo) = (&f.controls[0], &f.controls[1]);
        assert_eq!((empty.rows, empty.hits, empty.untestable), (2, 2, 0));
        assert_eq!(
            empty.examples[0].reference.as_deref(),
            Some("correct_hashes")
        );
        assert_eq!((echo.rows, echo.hits, echo.fraction), (2, 0, Some(0.0)));
    }

    #[test]
    fn rows_where_no_correct_format_passes_are_untestable_not_passed() {
        let names = strings(&["f@correct", "f@correct_hashes", "f@empty"]);
        let mut tally = ProbeTally::new(&strings(&["f"]), &names, 0.5);
        let s = Score::Scored;
        tally.add_row(0, &[s(0.0), s(0.0), s(0.0)]);
        tally.add_row(1, &[s(0.2), s(0.1), s(0.3)]);
        let f = &tally.finish()[0];
        let empty = &f.controls[0];
        assert_eq!(
            (
                empty.rows,
                empty.hits,
                empty.untestable,
                empty.skipped,
                empty.fraction
            ),
            (0, 0, 2, 0, None)
        );
        assert_eq!((f.too_strict.rows, f.too_strict.hits), (2, 2));
    }
}
