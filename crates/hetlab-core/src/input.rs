//! Reading the TOML input files (platforms, workloads): parse errors as one line that names
//! the file, the line and the reason.

use serde::de::DeserializeOwned;

/// Parses `text` (from `origin`, a file name) into `T`.
pub fn parse_toml<T: DeserializeOwned>(origin: &str, text: &str) -> Result<T, String> {
    toml::from_str(text).map_err(|e| {
        // toml's messages can span lines ("invalid table header\nexpected ..."): keep one line.
        let msg = e.message().trim().replace('\n', "; ");
        match e.span() {
            Some(span) => {
                let start = span.start.min(text.len());
                let line = text.as_bytes()[..start].iter().filter(|&&b| b == b'\n').count() + 1;
                // the line itself names the key a type error is about ("invalid type: integer")
                let shown = quoted_line(text, start);
                format!("{origin}:{line}: {msg}{shown}")
            }
            None => format!("{origin}: {msg}"),
        }
    })
}

/// ` (at `KEY = VALUE`)`: the start of the line holding byte `at`, trimmed, at most 60
/// characters, control characters escaped (the error stays one line); empty for a blank line.
fn quoted_line(text: &str, at: usize) -> String {
    let begin = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line: String = text[begin..].chars().take_while(|&c| c != '\n').take(60).collect();
    let line = line.trim();
    if line.is_empty() {
        return String::new();
    }
    format!(" (at `{}`)", line.escape_default())
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_are_one_line_with_file_and_line() {
        let e = super::parse_toml::<toml::Value>("w.toml", "name = 'x'\n[[tasks]\n").unwrap_err();
        assert!(e.starts_with("w.toml:2: ") && !e.contains('\n'), "{e}");
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct T {
            policy: String,
        }
        let e = super::parse_toml::<T>("w.toml", "# x\npolicy = 5\n").unwrap_err();
        assert!(e.starts_with("w.toml:2: ") && e.contains("(at `policy = 5`)"), "{e}");
    }
}
