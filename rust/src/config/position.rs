//! Byte offsets → 1-based line and column (columns count characters, not bytes).

/// The start offset of every line of one document, for offset → line:column lookups.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// The 1-based line and column of a byte offset (clamped to the document).
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        // An offset inside a multi-byte character counts as that character.
        let mut end = offset;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[start..end].chars().count() + 1;
        (line + 1, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_are_one_based() {
        let index = LineIndex::new("ab\ncd\n\nü=1");
        assert_eq!(index.position(0), (1, 1));
        assert_eq!(index.position(1), (1, 2));
        assert_eq!(index.position(3), (2, 1));
        assert_eq!(index.position(6), (3, 1));
        assert_eq!(index.position(7), (4, 1));
        // 'ü' is two bytes; '=' is the second character.
        assert_eq!(index.position(9), (4, 2));
        assert_eq!(index.position(999), (4, 4));
    }
}
