//! Rows as a flat tape of tokens: what the text-format readers hand the Python side.
//!
//! A reader parses each row straight into the tape (no `serde_json::Value` per row, no `String` per
//! field, no hashed map): scalars as tokens, strings and keys as UTF-8 text with their escapes decoded,
//! all of a batch's text in one buffer. The Python side then walks the tokens making objects, with
//! nothing left to parse. The parse runs on the reader's thread with the GIL released; one pass on the
//! caller's thread remains.

pub(crate) mod json;
mod text;

use super::text_width::is_wide;
use super::value_kind::{Text, ValueKind};
use super::Contract;
use serde_json::{Map, Number, Value};

/// One token of a row. Containers are `Array` / `Object` ... `End`; an object's entries are a `Key`
/// followed by the value's tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Token {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    /// A string: `text[start..start + len]`; `wide` when characters past Latin-1 are dense in it
    /// (`text_width`: how the Python side builds its `str`).
    Text {
        start: usize,
        len: usize,
        wide: bool,
    },
    /// An object key: `text[start..start + len]`.
    Key {
        start: usize,
        len: usize,
    },
    Array,
    Object,
    End,
}

// The `wide` flag sits in the padding beside the tag: a token stays three words, as before it.
const _: () = assert!(std::mem::size_of::<Token>() == 3 * std::mem::size_of::<usize>());

/// A row's place in the file and its first token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TapeRow {
    /// 1-based line the row starts on.
    pub line: u64,
    /// 0-based index among the file's rows.
    pub index: u64,
    pub start: usize,
}

/// Room a new tape's text keeps past its budget for the row that crosses it.
const ROW_SLACK: usize = 256 << 10;

/// The rows of one batch.
#[derive(Debug, Clone, Default)]
pub struct TapeBatch {
    pub tokens: Vec<Token>,
    /// The text of every string and key of the batch.
    pub text: String,
    pub rows: Vec<TapeRow>,
    /// The top-level entries of the row being written: its `Key` token and the value's shape.
    entries: Vec<(usize, ValueKind)>,
}

/// What a row is at its top level, for the contract check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowShape {
    /// An object; its entries are in the tape's scratch list.
    Object,
    Other(ValueKind),
}

/// The lengths of a tape's parts, to undo a row written in part.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    tokens: usize,
    text: usize,
}

impl TapeBatch {
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Bytes of text held: what bounds a batch's memory.
    pub(crate) fn text_bytes(&self) -> usize {
        self.text.len()
    }

    /// An empty tape with room for `text_bytes` of text and a row past them (a batch stops growing
    /// once its text reaches its budget). Made at its full size, the text is never copied to a larger
    /// buffer and fresh pages are touched once: 2-4 % of a JSONL read, measured.
    pub(crate) fn for_rows(text_bytes: usize) -> Self {
        TapeBatch {
            tokens: Vec::with_capacity(4096),
            text: String::with_capacity(text_bytes + ROW_SLACK),
            ..TapeBatch::default()
        }
    }

    /// Empties the tape, keeping its allocations.
    pub(crate) fn clear(&mut self) {
        self.rollback(Mark { tokens: 0, text: 0 });
        self.rows.clear();
    }

    pub(crate) fn mark(&self) -> Mark {
        Mark {
            tokens: self.tokens.len(),
            text: self.text.len(),
        }
    }

    /// Drops what was written since `mark` (a row that failed part-way).
    pub(crate) fn rollback(&mut self, mark: Mark) {
        self.tokens.truncate(mark.tokens);
        self.text.truncate(mark.text);
        self.entries.clear();
    }

    /// Starts a row: clears the entry list of the previous one.
    pub(crate) fn begin_row(&mut self) -> Mark {
        self.entries.clear();
        self.mark()
    }

    /// Records the row written since `mark` (its tokens start there).
    pub(crate) fn finish_row(&mut self, mark: Mark, line: u64, index: u64) {
        self.rows.push(TapeRow {
            line,
            index,
            start: mark.tokens,
        });
    }

    pub(crate) fn push_key(&mut self, key: &str) {
        let start = self.text.len();
        self.text.push_str(key);
        self.tokens.push(Token::Key {
            start,
            len: key.len(),
        });
    }

    /// Appends a string value.
    pub(crate) fn push_text(&mut self, text: &str) {
        let start = self.text.len();
        self.text.push_str(text);
        self.tokens.push(Token::Text {
            start,
            len: text.len(),
            wide: is_wide(text.as_bytes()),
        });
    }

    /// Appends a token that holds no text: a scalar, or a container's start or end.
    pub(crate) fn push_token(&mut self, token: Token) {
        debug_assert!(!matches!(token, Token::Text { .. } | Token::Key { .. }));
        self.tokens.push(token);
    }

    /// Appends a number as a JSON value holds it.
    pub(crate) fn push_number(&mut self, n: &Number) {
        self.tokens.push(number_token(n));
    }

    /// Appends a float; a non-finite one is null, as JSON has no spelling for it.
    pub(crate) fn push_float(&mut self, x: f64) {
        match Number::from_f64(x) {
            Some(n) => self.push_number(&n),
            None => self.tokens.push(Token::Null),
        }
    }

    /// Notes the top-level entry whose key token was pushed last.
    pub(crate) fn note_entry(&mut self, kind: ValueKind) {
        let key = self.tokens.len().saturating_sub(1);
        self.entries.push((key, kind));
    }

    /// Notes a top-level entry whose key token is at `key`.
    fn note_entry_at(&mut self, key: usize, kind: ValueKind) {
        self.entries.push((key, kind));
    }

    /// The text of a `Text` or `Key` token.
    pub fn text_of(&self, token: Token) -> &str {
        match token {
            Token::Text { start, len, .. } | Token::Key { start, len } => {
                &self.text[start..start + len]
            }
            _ => "",
        }
    }

    /// The row's top-level (key, shape) pairs, as the contracts take them.
    pub(crate) fn entries(&self) -> Vec<(&str, ValueKind)> {
        self.entries
            .iter()
            .map(|&(at, kind)| (self.text_of(self.tokens[at]), kind))
            .collect()
    }

    /// Renames the row's required columns to the contract's names (eval: lower-cased).
    pub(crate) fn apply_output_keys(&mut self, contract: Contract) {
        for i in 0..self.entries.len() {
            let at = self.entries[i].0;
            let key = self.text_of(self.tokens[at]);
            if let Some(name) = contract.output_key(key).filter(|name| *name != key) {
                let start = self.text.len();
                self.text.push_str(name);
                self.tokens[at] = Token::Key {
                    start,
                    len: name.len(),
                };
            }
        }
    }

    /// Writes a parsed value as a row (the full parser's result); returns its shape.
    pub(crate) fn push_row_value(&mut self, value: &Value) -> RowShape {
        let Value::Object(map) = value else {
            self.push_value(value);
            return RowShape::Other(ValueKind::of(value));
        };
        self.tokens.push(Token::Object);
        for (key, value) in map {
            self.push_key(key);
            let at = self.tokens.len() - 1;
            self.note_entry_at(at, ValueKind::of(value));
            self.push_value(value);
        }
        self.tokens.push(Token::End);
        RowShape::Object
    }

    /// Appends a value's tokens.
    pub(crate) fn push_value(&mut self, value: &Value) {
        match value {
            Value::Null => self.tokens.push(Token::Null),
            Value::Bool(b) => self.tokens.push(Token::Bool(*b)),
            Value::Number(n) => self.push_number(n),
            Value::String(s) => self.push_text(s),
            Value::Array(items) => {
                self.tokens.push(Token::Array);
                items.iter().for_each(|item| self.push_value(item));
                self.tokens.push(Token::End);
            }
            Value::Object(map) => {
                self.tokens.push(Token::Object);
                for (key, value) in map {
                    self.push_key(key);
                    self.push_value(value);
                }
                self.tokens.push(Token::End);
            }
        }
    }

    /// The shape of row `row`'s value (a row here may be any value: a Parquet cell of nested data).
    pub(crate) fn row_kind(&self, row: usize) -> ValueKind {
        let at = self.rows[row].start;
        match self.tokens[at] {
            Token::Null | Token::Key { .. } | Token::End => ValueKind::Null,
            Token::Bool(_) => ValueKind::Bool,
            Token::Int(_) | Token::UInt(_) => ValueKind::Int,
            Token::Float(_) => ValueKind::Float,
            text @ Token::Text { .. } => ValueKind::Str(Text::of(self.text_of(text))),
            Token::Array => ValueKind::Array,
            Token::Object => ValueKind::Object {
                empty: self.tokens[at + 1] == Token::End,
            },
        }
    }

    /// About the length of row `row`'s value as JSON, without writing it: text and keys with their
    /// quotes, a separator per item or entry, 8 bytes per other scalar.
    pub(crate) fn row_json_size(&self, row: usize) -> usize {
        let mut at = self.rows[row].start;
        self.json_size_at(&mut at)
    }

    fn json_size_at(&self, at: &mut usize) -> usize {
        let token = self.tokens[*at];
        *at += 1;
        match token {
            Token::Text { len, .. } => len + 2,
            Token::Array => {
                let mut size = 2;
                while self.tokens[*at] != Token::End {
                    size += self.json_size_at(at) + 1;
                }
                *at += 1;
                size
            }
            Token::Object => {
                let mut size = 2;
                while let Token::Key { len, .. } = self.tokens[*at] {
                    *at += 1;
                    size += len + 4 + self.json_size_at(at);
                }
                *at += 1;
                size
            }
            _ => 8,
        }
    }

    /// Row `row` as a JSON value (tests, and callers that want maps).
    pub fn row_value(&self, row: usize) -> Value {
        let mut at = self.rows[row].start;
        self.value_at(&mut at)
    }

    /// Row `row`'s fields (every row of a batch is an object).
    pub fn row_fields(&self, row: usize) -> Map<String, Value> {
        match self.row_value(row) {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    fn value_at(&self, at: &mut usize) -> Value {
        let token = self.tokens[*at];
        *at += 1;
        match token {
            Token::Null | Token::Key { .. } | Token::End => Value::Null,
            Token::Bool(b) => Value::Bool(b),
            Token::Int(i) => Value::from(i),
            Token::UInt(u) => Value::from(u),
            Token::Float(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
            Token::Text { .. } => Value::String(self.text_of(token).to_owned()),
            Token::Array => {
                let mut items = Vec::new();
                while self.tokens[*at] != Token::End {
                    items.push(self.value_at(at));
                }
                *at += 1;
                Value::Array(items)
            }
            Token::Object => {
                let mut map = Map::new();
                while let key @ Token::Key { .. } = self.tokens[*at] {
                    *at += 1;
                    let value = self.value_at(at);
                    map.insert(self.text_of(key).to_owned(), value);
                }
                *at += 1;
                Value::Object(map)
            }
        }
    }
}

fn number_token(n: &Number) -> Token {
    if let Some(i) = n.as_i64() {
        Token::Int(i)
    } else if let Some(u) = n.as_u64() {
        Token::UInt(u)
    } else {
        Token::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}
