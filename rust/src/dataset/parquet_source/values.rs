//! Parquet record fields → JSON values: numbers, text, lists and structs as arrays and objects, maps as
//! objects, dates as `YYYY-MM-DD`, timestamps as ISO-8601 UTC text, decimals as exact decimal text.

use parquet::data_type::Decimal;
use parquet::record::{Field, Row};
use serde_json::{Map, Number, Value};

fn row_to_map(row: &Row) -> Map<String, Value> {
    row.get_column_iter()
        .map(|(name, field)| (name.clone(), field_to_value(field)))
        .collect()
}

pub(super) fn float(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

pub(super) fn field_to_value(field: &Field) -> Value {
    match field {
        Field::Null => Value::Null,
        Field::Bool(b) => Value::Bool(*b),
        Field::Byte(v) => Value::from(*v),
        Field::Short(v) => Value::from(*v),
        Field::Int(v) => Value::from(*v),
        Field::Long(v) => Value::from(*v),
        Field::UByte(v) => Value::from(*v),
        Field::UShort(v) => Value::from(*v),
        Field::UInt(v) => Value::from(*v),
        Field::ULong(v) => Value::from(*v),
        Field::Float16(v) => float(f64::from(*v)),
        Field::Float(v) => float(f64::from(*v)),
        Field::Double(v) => float(*v),
        Field::Decimal(d) => Value::String(decimal_text(d)),
        Field::Str(s) => Value::String(s.clone()),
        Field::Bytes(b) => Value::String(String::from_utf8_lossy(b.data()).into_owned()),
        Field::Date(days) => Value::String(date_text(i64::from(*days))),
        Field::TimestampMillis(ms) => Value::String(timestamp_text(*ms, 1_000)),
        Field::TimestampMicros(us) => Value::String(timestamp_text(*us, 1_000_000)),
        Field::Group(row) => Value::Object(row_to_map(row)),
        Field::ListInternal(list) => {
            Value::Array(list.elements().iter().map(field_to_value).collect())
        }
        Field::MapInternal(map) => Value::Object(
            map.entries()
                .iter()
                .map(|(k, v)| {
                    let key = match field_to_value(k) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, field_to_value(v))
                })
                .collect(),
        ),
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
