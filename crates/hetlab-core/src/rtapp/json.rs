//! rt-app's JSON dialect, which is json-c's, not strict JSON: `//` and `/* */` comments, trailing
//! commas, repeated keys (kept in order), every JSON string escape (a NUL refused: rt-app's C
//! strings cannot hold one); and the typed reads of a value, each error naming the key.

use crate::workload::shown;

/// A JSON value of rt-app's dialect; objects keep repeated keys, in order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub(super) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Num(_) => "a number",
            Json::Str(_) => "a string",
            Json::Arr(_) => "an array",
            Json::Obj(_) => "an object",
        }
    }
}

/// The lenient reader: comments, trailing commas and repeated keys allowed.
struct Reader<'a> {
    text: &'a [u8],
    pos: usize,
    origin: &'a str,
}

impl<'a> Reader<'a> {
    fn error(&self, what: &str) -> String {
        let before = &self.text[..self.pos.min(self.text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        format!("{}: line {line}, column {column}: {what}", self.origin)
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    /// Skips white space and comments.
    fn skip(&mut self) -> Result<(), String> {
        loop {
            match (self.peek(), self.text.get(self.pos + 1)) {
                (Some(b' ' | b'\t' | b'\n' | b'\r'), _) => self.pos += 1,
                (Some(b'/'), Some(b'/')) => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.pos += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let end = self.text[self.pos + 2..].windows(2).position(|w| w == b"*/");
                    match end {
                        Some(end) => self.pos += end + 4,
                        None => return Err(self.error("a /* comment is not closed")),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > 64 {
            return Err(self.error("nested more than 64 levels deep"));
        }
        self.skip()?;
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(c) => Err(self.error(&format!("unexpected '{}'", c as char))),
            None => Err(self.error("the text ends where a value should be")),
        }
    }

    fn word(&mut self, word: &str, value: Json) -> Result<Json, String> {
        if self.text[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("");
        match text.parse::<f64>() {
            // Rust reads 1e400 as infinity: beyond any double, not a number any field can hold
            Ok(x) if x.is_infinite() => {
                self.pos = start;
                Err(self.error(&format!("{text} is out of range: a number's magnitude must be below {:e}", f64::MAX)))
            }
            Ok(x) => Ok(Json::Num(x)),
            Err(_) => Err(self.error(&format!("'{text}' is not a number"))),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1; // the opening quote
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.error("a string is not closed")),
                Some(b'"') => {
                    self.pos += 1;
                    return String::from_utf8(out).map_err(|_| self.error("a string is not UTF-8"));
                }
                Some(b'\\') => {
                    let escaped = match self.text.get(self.pos + 1) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => self.unicode_escape()?,
                        _ => {
                            return Err(
                                self.error("an escape JSON does not have (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
                            )
                        }
                    };
                    out.extend_from_slice(escaped.encode_utf8(&mut [0; 4]).as_bytes());
                    self.pos += 2;
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// The character of a `\uXXXX` escape at `pos` (with the low surrogate's escape after it
    /// for one beyond the BMP, as JSON writes them), leaving `pos` 4 bytes into the last escape.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let hex = |at: usize| -> Option<u32> {
            let digits = self.text.get(at..at + 4).filter(|d| d.iter().all(u8::is_ascii_hexdigit))?;
            digits.iter().try_fold(0, |code, &d| Some(code * 16 + (d as char).to_digit(16)?))
        };
        let Some(unit) = hex(self.pos + 2) else {
            return Err(self.error("\\u needs four hexadecimal digits"));
        };
        let code = match unit {
            0xD800..=0xDBFF => match (self.text.get(self.pos + 6..self.pos + 8), hex(self.pos + 8)) {
                (Some(b"\\u"), Some(low @ 0xDC00..=0xDFFF)) => {
                    self.pos += 6;
                    0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                }
                _ => return Err(self.error("a \\u high surrogate without its low surrogate")),
            },
            0xDC00..=0xDFFF => return Err(self.error("a \\u low surrogate without its high surrogate")),
            // rt-app keeps names in C strings, which end at a NUL (and DELAY_TIMER starts with one)
            0 => return Err(self.error("\\u0000: rt-app's strings cannot hold a NUL")),
            _ => unit,
        };
        self.pos += 4;
        char::from_u32(code).ok_or_else(|| self.error("\\u names no character"))
    }

    fn object(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1;
        let mut members = Vec::new();
        loop {
            self.skip()?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Obj(members));
                }
                Some(b'"') => {}
                _ => return Err(self.error("expected a \"key\" or '}'")),
            }
            let key = self.string()?;
            self.skip()?;
            if self.peek() != Some(b':') {
                return Err(self.error(&format!("expected ':' after \"{key}\"")));
            }
            self.pos += 1;
            let value = self.value(depth + 1)?;
            members.push((key, value));
            self.skip()?;
            match self.peek() {
                Some(b',') => self.pos += 1, // a trailing comma is fine: '}' is checked next
                Some(b'}') => {}
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip()?;
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(Json::Arr(items));
            }
            items.push(self.value(depth + 1)?);
            self.skip()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }
}

/// The document `text`; `origin` names it in errors (with the line and column).
pub(super) fn parse(origin: &str, text: &str) -> Result<Json, String> {
    // Refused, not skipped: JSON has no byte-order mark (RFC 8259 §8.1), and the file is meant
    // for rt-app on a board, whose parser (json-c) may not skip one: say so here rather than
    // simulate a file the board could refuse.
    if text.starts_with('\u{feff}') {
        return Err(format!(
            "{origin}: the file starts with a UTF-8 byte-order mark (EF BB BF), which is not JSON; save it as \
             UTF-8 without a BOM"
        ));
    }
    let mut reader = Reader { text: text.as_bytes(), pos: 0, origin };
    let value = reader.value(0)?;
    reader.skip()?;
    if reader.pos < reader.text.len() {
        return Err(reader.error("text after the end of the document"));
    }
    Ok(value)
}

/// A finite number.
pub(super) fn number(at: &str, value: &Json) -> Result<f64, String> {
    match value {
        Json::Num(x) if x.is_finite() => Ok(*x),
        other => Err(format!("{at} must be a number, got {}", other.kind())),
    }
}

/// A whole number within `min..=max`.
pub(super) fn whole(at: &str, value: &Json, min: f64, max: f64) -> Result<f64, String> {
    let x = number(at, value)?;
    if x.fract() != 0.0 || !(min..=max).contains(&x) {
        let (min, max, x) = (shown(min), shown(max), shown(x));
        return Err(format!("{at} must be a whole number in {min}..={max}, got {x}"));
    }
    Ok(x)
}

/// A string, not empty.
pub(super) fn text<'v>(at: &str, value: &'v Json) -> Result<&'v str, String> {
    match value {
        Json::Str(s) if !s.is_empty() => Ok(s),
        Json::Str(_) => Err(format!("{at} must not be empty")),
        other => Err(format!("{at} must be a string, got {}", other.kind())),
    }
}

/// `true` or `false`.
pub(super) fn boolean(at: &str, value: &Json) -> Result<bool, String> {
    match value {
        Json::Bool(b) => Ok(*b),
        other => Err(format!("{at} must be true or false, got {}", other.kind())),
    }
}

/// An object's members, in order (repeated keys kept).
pub(super) fn object<'v>(at: &str, value: &'v Json) -> Result<&'v [(String, Json)], String> {
    match value {
        Json::Obj(members) => Ok(members),
        other => Err(format!("{at} must be an object, got {}", other.kind())),
    }
}

/// A member of an event's object, if given.
pub(super) fn member<'v>(members: &'v [(String, Json)], key: &str) -> Option<&'v Json> {
    members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_take_every_json_escape_and_refuse_what_rt_app_cannot_hold() {
        let string = |text: &str| match parse("t.json", &format!("{{\"k\": \"{text}\"}}")) {
            Ok(Json::Obj(members)) => match &members[0].1 {
                Json::Str(s) => Ok(s.clone()),
                other => panic!("{other:?}"),
            },
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        };
        assert_eq!(string(r#"caf\u00e9 \"q\" \\ \/ \b\f\n\r\t"#).unwrap(), "café \"q\" \\ / \u{8}\u{c}\n\r\t");
        assert_eq!(string(r"\uD83D\uDE00 \u20AC").unwrap(), "\u{1F600} €"); // a surrogate pair, then the BMP
        for (text, says) in [
            (r"\u00g9", "four hexadecimal digits"),
            (r"\u+0e9", "four hexadecimal digits"),
            (r"\u12", "four hexadecimal digits"),
            (r"\uD83D x", "high surrogate without its low surrogate"),
            (r"\uDE00", "low surrogate without its high surrogate"),
            (r"\u0000delay", "cannot hold a NUL"),
            (r"\x41", "an escape JSON does not have"),
        ] {
            let e = string(text).unwrap_err();
            assert!(e.starts_with("t.json: line 1, column ") && e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn the_dialect_has_comments_trailing_commas_and_repeated_keys_in_order() {
        let doc = r#"/* a header */ { "a": 1, // one
            "b": [1, 2,], "a": "x", }"#;
        let Json::Obj(members) = parse("t.json", doc).unwrap() else { panic!() };
        let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a", "b", "a"]);
        assert_eq!(members[2].1, Json::Str("x".into()));
        let e = parse("t.json", "{\n \"a\": 1 \"b\": 2}").unwrap_err();
        assert!(e.starts_with("t.json: line 2, column 9: expected ',' or '}'"), "{e}");
        assert!(parse("t.json", "{} x").unwrap_err().contains("text after the end"));
        assert!(parse("t.json", "{ /* open").unwrap_err().contains("not closed"));
    }
}
