//! Parquet record fields → JSON values: numbers, text, lists and structs as arrays and objects, maps as
//! objects, dates as `YYYY-MM-DD`, timestamps as ISO-8601 UTC text, decimals as exact decimal text.

use crate::dataset::{TapeBatch, Token};
use parquet::data_type::Decimal;
use parquet::record::Field;
use serde_json::{Number, Value};

/// Writes a record field's value onto `tape` (what a JSON parser would write for its JSON value).
pub(super) fn push_field(tape: &mut TapeBatch, field: &Field) {
    match field {
        Field::Null => tape.push_token(Token::Null),
        Field::Bool(b) => tape.push_token(Token::Bool(*b)),
        Field::Byte(v) => tape.push_token(Token::Int(i64::from(*v))),
        Field::Short(v) => tape.push_token(Token::Int(i64::from(*v))),
        Field::Int(v) => tape.push_token(Token::Int(i64::from(*v))),
        Field::Long(v) => tape.push_token(Token::Int(*v)),
        Field::UByte(v) => tape.push_token(Token::Int(i64::from(*v))),
        Field::UShort(v) => tape.push_token(Token::Int(i64::from(*v))),
        Field::UInt(v) => tape.push_token(Token::Int(i64::from(*v))),
        Field::ULong(v) => tape.push_number(&Number::from(*v)),
        Field::Float16(v) => tape.push_float(f64::from(*v)),
        Field::Float(v) => tape.push_float(f64::from(*v)),
        Field::Double(v) => tape.push_float(*v),
        Field::Decimal(d) => tape.push_text(&decimal_text(d)),
        Field::Str(s) => tape.push_text(s),
        Field::Bytes(b) => tape.push_text(&String::from_utf8_lossy(b.data())),
        Field::Date(days) => tape.push_text(&date_text(i64::from(*days))),
        Field::TimestampMillis(ms) => tape.push_text(&timestamp_text(*ms, 1_000)),
        Field::TimestampMicros(us) => tape.push_text(&timestamp_text(*us, 1_000_000)),
        Field::Group(row) => {
            tape.push_token(Token::Object);
            for (name, field) in row.get_column_iter() {
                tape.push_key(name);
                push_field(tape, field);
            }
            tape.push_token(Token::End);
        }
        Field::ListInternal(list) => {
            tape.push_token(Token::Array);
            list.elements()
                .iter()
                .for_each(|item| push_field(tape, item));
            tape.push_token(Token::End);
        }
        Field::MapInternal(map) => {
            tape.push_token(Token::Object);
            for (key, value) in map.entries() {
                match key {
                    Field::Str(text) => tape.push_key(text),
                    other => tape.push_key(&key_text(other)),
                }
                push_field(tape, value);
            }
            tape.push_token(Token::End);
        }
    }
}

/// A map key that is not text, as an object key: its value's JSON text (`1`, `true`, `null`), or the
/// text itself for the kinds written as text (dates, decimals).
fn key_text(key: &Field) -> String {
    let mut tape = TapeBatch::default();
    let mark = tape.begin_row();
    push_field(&mut tape, key);
    tape.finish_row(mark, 0, 0);
    match tape.row_value(0) {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

/// Exact decimal text of a big-endian two's-complement unscaled value.
fn decimal_text(d: &Decimal) -> String {
    let bytes = d.data();
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let mut value: i128 = if negative { -1 } else { 0 };
    for b in bytes.iter().rev().take(16).rev() {
        value = (value << 8) | i128::from(*b);
    }
    let digits = value.unsigned_abs().to_string();
    let scale = d.scale().max(0) as usize;
    let sign = if value < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// Civil date of a day count since 1970-01-01 (proleptic Gregorian).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn date_text(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

fn timestamp_text(ticks: i64, per_second: i64) -> String {
    let seconds = ticks.div_euclid(per_second);
    let fraction = ticks.rem_euclid(per_second);
    let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (h, mi, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let width = if per_second == 1_000 { 3 } else { 6 };
    format!(
        "{}T{h:02}:{mi:02}:{s:02}.{fraction:0width$}Z",
        date_text(days)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_timestamps() {
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(19_723), "2024-01-01");
        assert_eq!(date_text(-1), "1969-12-31");
        assert_eq!(timestamp_text(1_500, 1_000), "1970-01-01T00:00:01.500Z");
        assert_eq!(timestamp_text(-1, 1_000_000), "1969-12-31T23:59:59.999999Z");
    }

    #[test]
    fn decimals_keep_every_digit() {
        let d = Decimal::from_i32(-12_345, 9, 2);
        assert_eq!(decimal_text(&d), "-123.45");
        let d = Decimal::from_i64(5, 18, 3);
        assert_eq!(decimal_text(&d), "0.005");
    }
}
