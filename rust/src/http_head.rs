//! The framing of an HTTP/1.1 answer head, read as `osmosis_ai.llm.http1_connection` reads it.
//!
//! Only the plain form every model server sends is read here: lines of printable ASCII separated by CRLF,
//! a start line `VERSION SP DIGITS [SP reason]`, a `Content-Length` of digits. Anything else (a tab, a
//! control or non-ASCII byte, a sign or an underscore in a number, no status) is `None`: the Python reader,
//! whose rules (`str.split`, `str.strip`, `str.lower`, `int`) this mirrors on the plain form, reads it and
//! raises what it raises.

use std::borrow::Cow;

/// What a connection needs of an answer head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead<'a> {
    pub status: u32,
    /// Header names lower-cased and values trimmed of spaces, in order, repeats included (the later wins).
    pub headers: Vec<(Cow<'a, str>, &'a str)>,
    pub content_length: Option<u64>,
    pub chunked: bool,
    pub keep_alive: bool,
}

fn digits(text: &str, most: usize) -> bool {
    !text.is_empty() && text.len() <= most && text.bytes().all(|b| b.is_ascii_digit())
}

fn lowered(name: &str) -> Cow<'_, str> {
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    }
}

/// The head (without its blank line) in the plain form, or `None` for the Python reader.
pub fn parse_response_head(head: &[u8]) -> Option<ResponseHead<'_>> {
    // One pass: every byte printable ASCII, except CRLF pairs, which end lines (where Python splits).
    let mut ends = Vec::with_capacity(12);
    let mut at = 0;
    while at < head.len() {
        match head[at] {
            0x20..=0x7e => at += 1,
            b'\r' if head.get(at + 1) == Some(&b'\n') => {
                ends.push(at);
                at += 2;
            }
            _ => return None,
        }
    }
    ends.push(head.len());
    let text = std::str::from_utf8(head).ok()?; // printable ASCII is UTF-8
    let start = &text[..ends[0]];
    // Python splits the start line on single spaces: the status is the text between the first two.
    let first = start.find(' ')?;
    let (version, after) = (&start[..first], &start[first + 1..]);
    let status = &after[..after.find(' ').unwrap_or(after.len())];
    if !digits(status, 9) {
        return None;
    }
    let mut headers = Vec::with_capacity(ends.len() - 1);
    let (mut length, mut encoding, mut connection) = (None, "", "");
    for pair in ends.windows(2) {
        let line = &text[pair[0] + 2..pair[1]];
        if line.is_empty() {
            continue;
        }
        let (name, value) = match line.find(':') {
            Some(colon) => (&line[..colon], &line[colon + 1..]),
            None => (line, ""),
        };
        let (name, value) = (lowered(name.trim_matches(' ')), value.trim_matches(' '));
        match name.as_ref() {
            "content-length" => length = Some(value),
            "transfer-encoding" => encoding = value,
            "connection" => connection = value,
            _ => {}
        }
        headers.push((name, value));
    }
    let content_length = match length {
        None => None,
        Some(value) if digits(value, 18) => Some(value.parse().ok()?),
        Some(_) => return None,
    };
    let keep_alive = (version == "HTTP/1.1" && !connection.eq_ignore_ascii_case("close"))
        || connection.eq_ignore_ascii_case("keep-alive");
    Some(ResponseHead {
        status: status.parse().ok()?,
        headers,
        content_length,
        chunked: encoding.eq_ignore_ascii_case("chunked"),
        keep_alive,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_plain_head_of_a_model_server() {
        let head = b"HTTP/1.1 200 OK\r\nServer: x/1\r\nContent-Type: application/json\r\nContent-Length: 42";
        let parsed = parse_response_head(head).unwrap();
        assert_eq!(parsed.status, 200);
        assert_eq!(parsed.content_length, Some(42));
        assert!(!parsed.chunked && parsed.keep_alive);
        assert_eq!(
            parsed.headers[1],
            ("content-type".into(), "application/json")
        );
    }

    #[test]
    fn names_are_lowered_values_trimmed_and_repeats_kept_in_order() {
        let head =
            b"HTTP/1.0 503 Busy\r\n X-A :  1 \r\n\r\nx-a: 2\r\nConnection: Keep-Alive\r\nNoColon";
        let parsed = parse_response_head(head).unwrap();
        let names: Vec<&str> = parsed.headers.iter().map(|(n, _)| n.as_ref()).collect();
        assert_eq!(names, ["x-a", "x-a", "connection", "nocolon"]);
        assert_eq!(parsed.headers[0].1, "1");
        assert_eq!(parsed.headers[3].1, "");
        assert!(parsed.keep_alive, "HTTP/1.0 asked to keep the connection");
        assert_eq!(parsed.content_length, None);
    }

    #[test]
    fn framing_follows_the_python_rules() {
        let chunked =
            parse_response_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: CHUNKED").unwrap();
        assert!(chunked.chunked);
        let closing = parse_response_head(b"HTTP/1.1 200 OK\r\nConnection: close").unwrap();
        assert!(!closing.keep_alive);
        let old = parse_response_head(b"HTTP/1.0 200 OK").unwrap();
        assert!(!old.keep_alive);
        assert_eq!(parse_response_head(b"HTTP/1.1 204").unwrap().status, 204);
    }

    #[test]
    fn anything_but_the_plain_form_is_left_to_python() {
        for head in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: +5"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: 1_0",
            b"HTTP/1.1 200 OK\r\nContent-Length: -1",
            b"HTTP/1.1 200 OK\r\nContent-Length:\t5",
            b"HTTP/1.1 200 OK\r\nX: caf\xe9",
            b"HTTP/1.1 200 OK\nContent-Length: 5",
            b"HTTP/1.1  200 OK",
            b"HTTP/1.1",
            b"HTTP/1.1 2x0 OK",
            b"",
        ] {
            assert_eq!(parse_response_head(head), None, "{head:?}");
        }
    }
}
