//! ATIF's step `timestamp`: an ISO 8601 date or date-time, as the established package reads it
//! (`datetime.fromisoformat` of Python 3.11+ after `Z` is turned into `+00:00`).
//!
//! Accepted: a calendar date (`2025-10-16`, `20251016`) or a week date (`2025-W42`, `2025-W42-4`,
//! `2025W424`), optionally followed by one separator character and a time `HH[:MM[:SS[.f…]]]` (or the basic
//! `HHMM[SS]`), optionally followed by `Z` or an offset `±HH[:MM[:SS[.f…]]]` under 24 hours. Ordinal dates
//! (`2025-289`) and hour 24 are refused, as Python refuses them.

/// Why `text` is not an ISO 8601 date-time, or `None` when it is one.
pub fn problem(text: &str) -> Option<&'static str> {
    check(text).err()
}

fn check(text: &str) -> Result<(), &'static str> {
    let date_len = date(text.as_bytes())?;
    let rest = &text[date_len..];
    let Some(separator) = rest.chars().next() else {
        return Ok(()); // a date alone
    };
    let time_text = &rest[separator.len_utf8()..];
    if time_text.is_empty() {
        return Err("a date followed by a separator needs a time after it");
    }
    time_with_offset(time_text.as_bytes())
}

fn digits(bytes: &[u8], at: usize, count: usize) -> Option<u32> {
    let part = bytes.get(at..at + count)?;
    if !part.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(part.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Whether ISO year `year` has 53 weeks (its 1 January is a Thursday, or a Wednesday in a leap year).
fn has_week_53(year: u32) -> bool {
    // Day of the week of 1 January (0 = Monday), Gauss's method.
    let y = year - 1;
    let jan1 = (1 + 5 * (y % 4) + 4 * (y % 100) + 6 * (y % 400)) % 7; // 0 = Sunday
    let monday_based = (jan1 + 6) % 7;
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    monday_based == 3 || (leap && monday_based == 2)
}

/// The length of the leading date, or why it is not one.
fn date(bytes: &[u8]) -> Result<usize, &'static str> {
    const BAD: &str = "must start with a date YYYY-MM-DD";
    let year = digits(bytes, 0, 4).ok_or(BAD)?;
    if year == 0 {
        return Err("the year must be 1 or later");
    }
    let extended = bytes.get(4) == Some(&b'-');
    let at = if extended { 5 } else { 4 };
    if bytes.get(at) == Some(&b'W') {
        return week_date(bytes, year, at + 1, extended);
    }
    let month = digits(bytes, at, 2).ok_or(BAD)?;
    let day_at = if extended { at + 3 } else { at + 2 };
    if extended && bytes.get(at + 2) != Some(&b'-') {
        return Err(BAD);
    }
    let day = digits(bytes, day_at, 2).ok_or(BAD)?;
    if !(1..=12).contains(&month) {
        return Err("the month must be 01 to 12");
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err("the day does not exist in that month");
    }
    Ok(day_at + 2)
}

fn week_date(bytes: &[u8], year: u32, at: usize, extended: bool) -> Result<usize, &'static str> {
    let week = digits(bytes, at, 2).ok_or("a week date needs two week digits (YYYY-Www)")?;
    if week == 0 || week > 53 || (week == 53 && !has_week_53(year)) {
        return Err("the week does not exist in that year");
    }
    let mut end = at + 2;
    let day_at = if extended { end + 1 } else { end };
    let day_follows = if extended {
        bytes.get(end) == Some(&b'-') && digits(bytes, day_at, 1).is_some()
    } else {
        digits(bytes, day_at, 1).is_some()
    };
    if day_follows {
        let day = digits(bytes, day_at, 1).unwrap_or(0);
        if !(1..=7).contains(&day) {
            return Err("the day of the week must be 1 to 7");
        }
        end = day_at + 1;
    }
    Ok(end)
}

/// `HH[:MM[:SS[.f…]]]` or `HH[MM[SS[.f…]]]`; returns where it ends.
fn clock(bytes: &[u8], what: &'static str) -> Result<usize, &'static str> {
    let hour = digits(bytes, 0, 2).ok_or(what)?;
    if hour > 23 {
        return Err("the hour must be 00 to 23");
    }
    let colon = bytes.get(2) == Some(&b':');
    let mut at = 2;
    for (index, limit) in [(0, 59), (1, 59)] {
        let start = if colon { at + 1 } else { at };
        if colon && bytes.get(at) != Some(&b':') {
            break;
        }
        let Some(value) = digits(bytes, start, 2) else {
            if colon {
                return Err(what);
            }
            break;
        };
        if value > limit {
            return Err(if index == 0 {
                "the minute must be 00 to 59"
            } else {
                "the second must be 00 to 59"
            });
        }
        at = start + 2;
        if index == 1 && matches!(bytes.get(at), Some(b'.' | b',')) {
            let fraction = bytes[at + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if fraction == 0 {
                return Err("a decimal point needs digits after it");
            }
            at += 1 + fraction;
        }
    }
    Ok(at)
}

fn time_with_offset(bytes: &[u8]) -> Result<(), &'static str> {
    let end = clock(bytes, "the time must be HH:MM[:SS[.ffffff]]")?;
    match bytes.get(end) {
        None => Ok(()),
        Some(b'Z') if end + 1 == bytes.len() => Ok(()),
        Some(b'+' | b'-') => {
            let offset = &bytes[end + 1..];
            let used = clock(offset, "the offset must be +HH:MM or -HH:MM")?;
            if used == offset.len() {
                Ok(())
            } else {
                Err("unexpected text after the offset")
            }
        }
        Some(_) => Err("unexpected text after the time"),
    }
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn accepts_the_forms_python_accepts() {
        for ok in [
            "2025-10-16",
            "20251016",
            "2025-10-16T14:30:00Z",
            "2025-10-16T14:30:00.123456+00:00",
            "2025-10-16 14:30",
            "2025-10-16T14",
            "2025-10-16T143000",
            "2025-10-16T14:30:00,5-05:30",
            "2024-02-29T00:00:00+0530",
            "2025-W42",
            "2025-W42-4",
            "2025W424",
            "2020-W53-1",
            "2025-10-16T14:30:00.1234567891Z",
        ] {
            assert_eq!(problem(ok), None, "{ok}");
        }
    }

    #[test]
    fn refuses_what_python_refuses() {
        for bad in [
            "",
            "yesterday",
            "2025-13-01",
            "2025-02-29",
            "2025-10-16T",
            "2025-10-16T24:00",
            "2025-10-16T14:60",
            "2025-10-16T14:30:00ZZ",
            "2025-10-16T14:30:00+",
            "2025-289",
            "2025-W54",
            "2025-W53",
            "2025-W42-8",
            "0000-01-01",
            "2025-10-16T14:30:00.",
            "2025-10-16T14:3",
        ] {
            assert!(problem(bad).is_some(), "{bad:?} was accepted");
        }
    }
}
