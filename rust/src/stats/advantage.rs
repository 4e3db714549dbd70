//! Group-relative advantage signs: which groups of runs a changed reward would teach differently.
//!
//! GRPO-style training scores each run of a prompt against its group: the advantage of run `i` is
//! `r_i - mean(r)`. Its sign says whether the update pushes that run up or down. Re-scoring the same
//! runs with another reward changes what is learnt exactly where those signs change.

use super::{CompensatedSum, StatsError};

/// How many groups (and runs) change an advantage sign between two scorings of the same runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SignChanges {
    pub groups: usize,
    pub groups_changed: usize,
    pub runs_changed: usize,
    /// Indices of the groups that changed, in order.
    pub changed: Vec<usize>,
}

/// The sign (-1, 0, +1) of each run's advantage within its group. A difference from the mean within
/// a relative 1e-9 is 0: a group of equal scores has no signal, whatever the rounding of its mean.
pub fn advantage_signs(scores: &[f64], lengths: &[usize]) -> Result<Vec<i8>, StatsError> {
    let total: usize = lengths.iter().sum();
    if total != scores.len() {
        return Err(StatsError::new(format!(
            "group lengths add up to {total}, but there are {} scores",
            scores.len()
        )));
    }
    let mut signs = Vec::with_capacity(scores.len());
    let mut start = 0;
    for (group, &len) in lengths.iter().enumerate() {
        let runs = &scores[start..start + len];
        if let Some(bad) = runs.iter().position(|s| !s.is_finite()) {
            return Err(
                StatsError::new(format!("run {bad}: score {} is not finite", runs[bad]))
                    .at_row(group as u64),
            );
        }
        let mut sum = CompensatedSum::default();
        runs.iter().for_each(|&s| sum.add(s));
        let mean = if len == 0 {
            0.0
        } else {
            sum.total() / len as f64
        };
        let tolerance = 1e-9 * mean.abs().max(1.0);
        signs.extend(runs.iter().map(|&s| {
            let d = s - mean;
            if d > tolerance {
                1
            } else if d < -tolerance {
                -1
            } else {
                0
            }
        }));
        start += len;
    }
    Ok(signs)
}

/// Compares the advantage signs of two scorings (`old`, `new`) of the same runs, grouped by `lengths`.
pub fn advantage_sign_changes(
    old: &[f64],
    new: &[f64],
    lengths: &[usize],
) -> Result<SignChanges, StatsError> {
    if old.len() != new.len() {
        return Err(StatsError::new(format!(
            "old has {} scores, new has {}",
            old.len(),
            new.len()
        )));
    }
    let (a, b) = (
        advantage_signs(old, lengths)?,
        advantage_signs(new, lengths)?,
    );
    let mut out = SignChanges {
        groups: lengths.len(),
        ..SignChanges::default()
    };
    let mut start = 0;
    for (group, &len) in lengths.iter().enumerate() {
        let differing = (start..start + len).filter(|&i| a[i] != b[i]).count();
        if differing > 0 {
            out.groups_changed += 1;
            out.runs_changed += differing;
            out.changed.push(group);
        }
        start += len;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_within_groups() {
        let signs = advantage_signs(&[1.0, 1.0, 0.0, 0.3, 0.3, 0.3], &[3, 3]).unwrap();
        assert_eq!(signs, vec![1, 1, -1, 0, 0, 0]);
    }

    #[test]
    fn a_flip_that_keeps_the_ranking_keeps_the_signs() {
        // Group 0: scaled scores, same signs. Group 1: one run changes side. Group 2: all equal now.
        let old = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0];
        let new = [0.5, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0];
        let changes = advantage_sign_changes(&old, &new, &[2, 3, 2]).unwrap();
        assert_eq!(changes.groups, 3);
        assert_eq!(changes.changed, vec![1, 2]);
        assert_eq!((changes.groups_changed, changes.runs_changed), (2, 3));
    }

    #[test]
    fn mismatched_input_is_an_error() {
        assert!(advantage_sign_changes(&[1.0], &[1.0, 0.0], &[1]).is_err());
        assert!(advantage_signs(&[1.0, 0.0], &[3]).is_err());
        let err = advantage_signs(&[1.0, f64::NAN], &[1, 1]).unwrap_err();
        assert_eq!(err.row, Some(1));
    }
}
