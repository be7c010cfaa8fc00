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
                let line = text[..span.start.min(text.len())].lines().count().max(1);
                format!("{origin}:{line}: {msg}")
            }
            None => format!("{origin}: {msg}"),
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_are_one_line_with_file_and_line() {
        let e = super::parse_toml::<toml::Value>("w.toml", "name = 'x'\n[[tasks]\n").unwrap_err();
        assert!(e.starts_with("w.toml:2: ") && !e.contains('\n'), "{e}");
    }
}
