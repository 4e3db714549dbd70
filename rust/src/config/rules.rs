//! The small rules every config shares: name patterns, SHA shape, rollout/entrypoint paths, did-you-mean.

/// `[env]` names: `^[A-Z_][A-Z0-9_]*$`.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `[secrets].required` names: `^[A-Z][A-Z0-9_]*$` (no leading underscore).
pub fn is_secret_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase()) && is_env_name(name)
}

/// The prefix the platform reserves for the variables it injects itself.
pub const RESERVED_ENV_PREFIX: &str = "_OSMOSIS_";

/// `commit_sha`: `^[0-9a-fA-F]{7,40}$`.
pub fn is_commit_sha(value: &str) -> bool {
    (7..=40).contains(&value.len()) && value.chars().all(|c| c.is_ascii_hexdigit())
}

/// Why a logical rollout name (a directory under `rollouts/`) is unusable, if it is.
pub fn rollout_name_problem(name: &str) -> Option<String> {
    if name.starts_with('/') || name.starts_with('\\') || has_drive_prefix(name) {
        return Some(
            "must be a rollout name (a directory under rollouts/), not an absolute path".into(),
        );
    }
    if name.trim().is_empty() || name == "." || name == ".." {
        return Some(format!("'{name}' is not a valid rollout name"));
    }
    if name.contains('/') || name.contains('\\') {
        return Some("must be a single directory name under rollouts/ (no path separators)".into());
    }
    if name.chars().any(char::is_control) {
        return Some("must not contain control characters".into());
    }
    None
}

/// Why an entrypoint (a file path relative to `rollouts/<rollout>/`) is unusable, if it is.
pub fn entrypoint_problem(path: &str) -> Option<String> {
    if path.trim().is_empty() {
        return Some("must not be empty (the scaffold uses \"main.py\")".into());
    }
    if path.starts_with('/') || path.starts_with('\\') || has_drive_prefix(path) {
        return Some("must be a path relative to rollouts/<rollout>/, not an absolute path".into());
    }
    // Walk the segments: the path must never climb above the rollout directory.
    let mut depth: i32 = 0;
    for segment in path.split(['/', '\\']) {
        match segment {
            "" | "." => {}
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return Some(
                        "must stay inside rollouts/<rollout>/ (it climbs out with '..')".into(),
                    );
                }
            }
            _ => depth += 1,
        }
    }
    if !path.ends_with(".py") {
        return Some("must be a Python file (ending in .py) that the platform imports".into());
    }
    None
}

fn has_drive_prefix(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// Edit distance (insertions, deletions, substitutions and adjacent swaps), on characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev2: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        prev2 = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()]
}

/// The candidate a misspelt key most likely meant: same letters ignoring case/dashes, or within a small
/// edit distance (a third of the longer word, at least 1, at most 3).
pub fn did_you_mean<'a>(
    key: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let normalized = |s: &str| s.to_ascii_lowercase().replace('-', "_");
    let wanted = normalized(key);
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let distance = if normalized(candidate) == wanted {
            0
        } else {
            edit_distance(&wanted, &normalized(candidate))
        };
        let limit = (key.chars().count().max(candidate.chars().count()) / 3).clamp(1, 3);
        let better = match best {
            None => true,
            Some((d, _)) => distance < d,
        };
        if distance <= limit && better {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_and_secret_names() {
        for ok in ["A", "_A", "A_1", "OPENAI_API_KEY", "_"] {
            assert!(is_env_name(ok), "{ok}");
        }
        for bad in ["", "a", "1A", "A-B", "A B", "Ä"] {
            assert!(!is_env_name(bad), "{bad}");
        }
        assert!(is_secret_name("OPENAI_API_KEY"));
        assert!(!is_secret_name("_LEADING"));
        assert!(!is_secret_name("lower"));
        assert!(!is_secret_name("9LIVES"));
    }

    #[test]
    fn commit_sha_shape() {
        assert!(is_commit_sha("abc1234"));
        assert!(is_commit_sha(&"F".repeat(40)));
        assert!(!is_commit_sha("abc123"));
        assert!(!is_commit_sha(&"a".repeat(41)));
        assert!(!is_commit_sha("abcdefg"));
    }

    #[test]
    fn rollout_names_and_entrypoints() {
        assert!(rollout_name_problem("my-rollout").is_none());
        for bad in ["", ".", "..", "/abs", "a/b", "a\\b", "C:x"] {
            assert!(rollout_name_problem(bad).is_some(), "{bad}");
        }
        assert!(entrypoint_problem("main.py").is_none());
        assert!(entrypoint_problem("pkg/../agent.py").is_none());
        for bad in ["", "/main.py", "../main.py", "a/../../main.py", "main.txt"] {
            assert!(entrypoint_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("ab", "ba"), 1);
        let keys = [
            "rollout",
            "entrypoint",
            "model_path",
            "dataset",
            "branch",
            "commit_sha",
        ];
        assert_eq!(did_you_mean("rolout", keys), Some("rollout"));
        assert_eq!(did_you_mean("modelpath", keys), Some("model_path"));
        assert_eq!(did_you_mean("Dataset", keys), Some("dataset"));
        assert_eq!(did_you_mean("commit-sha", keys), Some("commit_sha"));
        assert_eq!(did_you_mean("temperature", keys), None);
    }
}
