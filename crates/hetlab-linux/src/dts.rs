//! A small reader of device-tree source (`.dts`/`.dtsi`) for what SoC CPU descriptions use:
//! nodes and properties, labels, phandle references (`&label`, `<&label ...>`), `/include/ "x"`
//! and `#include "x"` of a file next to the including one, cells (`/bits/ 64` too), strings and
//! byte strings, `&label { ... }` overlays and `/delete-node/`, `/delete-property/`.
//!
//! `#include <dt-bindings/...>` headers are not read (they are C headers of macros): a cell that
//! names a macro or holds an expression stays a [`Cell::Symbol`], and the caller is told once.
//! Anything else (`#define`, `#if`, a malformed node) is refused with one line naming the file
//! and line.

use std::path::{Path, PathBuf};

/// Where a token was: file (as given) and 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One cell of a `< ... >` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    Num(u64),
    /// `&label`: a phandle.
    Ref(String),
    /// A macro from an unread header, or an expression in parentheses, as written.
    Symbol(String),
}

/// One comma-separated piece of a property's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Cells(Vec<Cell>),
    Str(String),
    Bytes(Vec<u8>),
    /// A bare `&label` (a path reference).
    PathRef(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prop {
    pub name: String,
    pub values: Vec<Value>,
    pub at: Loc,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub labels: Vec<String>,
    pub props: Vec<Prop>,
    pub children: Vec<Node>,
    pub at: Loc,
}

impl Node {
    fn new(name: &str, at: Loc) -> Node {
        Node { name: name.to_string(), labels: Vec::new(), props: Vec::new(), children: Vec::new(), at }
    }

    pub fn prop(&self, name: &str) -> Option<&Prop> {
        self.props.iter().find(|p| p.name == name)
    }

    pub fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The cells of `name` as numbers, all of its values run together (`None` if any cell is not
    /// a number).
    pub fn nums(&self, name: &str) -> Option<Vec<u64>> {
        let mut out = Vec::new();
        for v in &self.prop(name)?.values {
            let Value::Cells(cells) = v else { return None };
            for c in cells {
                let Cell::Num(n) = c else { return None };
                out.push(*n);
            }
        }
        Some(out)
    }

    pub fn num(&self, name: &str) -> Option<u64> {
        self.nums(name).and_then(|v| v.first().copied())
    }

    /// The phandle references of `name`, in order.
    pub fn refs(&self, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        for v in self.prop(name).map_or(&[][..], |p| &p.values[..]) {
            match v {
                Value::Cells(cells) => {
                    out.extend(cells.iter().filter_map(|c| if let Cell::Ref(r) = c { Some(r.clone()) } else { None }))
                }
                Value::PathRef(r) => out.push(r.clone()),
                _ => {}
            }
        }
        out
    }

    pub fn strings(&self, name: &str) -> Vec<String> {
        let values = self.prop(name).map_or(&[][..], |p| &p.values[..]);
        values.iter().filter_map(|v| if let Value::Str(s) = v { Some(s.clone()) } else { None }).collect()
    }

    /// The node labelled `label` anywhere below (or at) this one.
    pub fn find_label(&self, label: &str) -> Option<&Node> {
        if self.labels.iter().any(|l| l == label) {
            return Some(self);
        }
        self.children.iter().find_map(|c| c.find_label(label))
    }

    fn find_label_mut(&mut self, label: &str) -> Option<&mut Node> {
        if self.labels.iter().any(|l| l == label) {
            return Some(self);
        }
        self.children.iter_mut().find_map(|c| c.find_label_mut(label))
    }

    fn remove_label(&mut self, label: &str) -> bool {
        if let Some(i) = self.children.iter().position(|c| c.labels.iter().any(|l| l == label)) {
            self.children.remove(i);
            return true;
        }
        self.children.iter_mut().any(|c| c.remove_label(label))
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Punct(char),
    /// `/dts-v1/`, `/bits/`, `/include/`, `/delete-node/` ...
    Keyword(String),
    /// `( ... )` inside cells, as written.
    Expr(String),
}

/// The tree of `path` and what it includes, and notes on what was not read.
pub fn read(path: &Path) -> Result<(Node, Vec<String>), String> {
    let mut notes = Vec::new();
    let mut toks = Vec::new();
    lex_file(path, &mut toks, &mut notes, 0)?;
    let mut root = Node::new("/", Loc { file: path.display().to_string(), line: 1 });
    Parser { toks, i: 0 }.file(&mut root)?;
    Ok((root, notes))
}

fn lex_file(path: &Path, out: &mut Vec<(Tok, Loc)>, notes: &mut Vec<String>, depth: usize) -> Result<(), String> {
    if depth > 16 {
        return Err(format!("{}: includes nested more than 16 deep", path.display()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let file = path.file_name().map_or(path.display().to_string(), |f| f.to_string_lossy().into_owned());
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut lx = Lexer { s: text.as_bytes(), i: 0, line: 1, file: &file };
    while let Some((tok, at)) = lx.next(notes)? {
        match tok {
            Tok::Keyword(k) if k == "include" => {
                let Some((Tok::Str(name), _)) = lx.next(notes)? else {
                    return Err(format!("{at}: /include/ wants a quoted file name"));
                };
                lex_file(&next_to(&dir, &name, &at)?, out, notes, depth + 1)?;
            }
            Tok::Keyword(k) if k.starts_with("#include ") => {
                lex_file(&next_to(&dir, &k[9..], &at)?, out, notes, depth + 1)?;
            }
            _ => out.push((tok, at)),
        }
    }
    Ok(())
}

fn next_to(dir: &Path, name: &str, at: &Loc) -> Result<PathBuf, String> {
    let p = dir.join(name);
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!("{at}: included file {name} is not next to it ({}); put it there", p.display()))
    }
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
    line: usize,
    file: &'a str,
}

fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b",._+-@#?*".contains(&b)
}

impl Lexer<'_> {
    fn loc(&self) -> Loc {
        Loc { file: self.file.to_string(), line: self.line }
    }

    fn peek(&self, k: usize) -> u8 {
        self.s.get(self.i + k).copied().unwrap_or(0)
    }

    fn bump(&mut self) -> u8 {
        let b = self.peek(0);
        self.i += 1;
        if b == b'\n' {
            self.line += 1;
        }
        b
    }

    fn at_line_start(&self) -> bool {
        self.s[..self.i].iter().rev().take_while(|&&b| b != b'\n').all(|b| b.is_ascii_whitespace())
    }

    /// `#include`, `#define`, `#if` ... rather than a property such as `#address-cells`.
    fn is_directive(&self) -> bool {
        let word: Vec<u8> = self.s[self.i + 1..].iter().take_while(|b| b.is_ascii_alphabetic()).copied().collect();
        let after = self.s.get(self.i + 1 + word.len()).copied().unwrap_or(b'\n');
        (after == b' ' || after == b'\t' || after == b'\n')
            && [
                &b"include"[..],
                b"define",
                b"undef",
                b"if",
                b"ifdef",
                b"ifndef",
                b"else",
                b"elif",
                b"endif",
                b"error",
                b"pragma",
            ]
            .contains(&&word[..])
    }

    fn rest_of_line(&mut self) -> String {
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i] != b'\n' {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).trim().to_string()
    }

    fn next(&mut self, notes: &mut Vec<String>) -> Result<Option<(Tok, Loc)>, String> {
        loop {
            while self.peek(0).is_ascii_whitespace() {
                self.bump();
            }
            if self.peek(0) == b'/' && self.peek(1) == b'/' {
                self.rest_of_line();
            } else if self.peek(0) == b'/' && self.peek(1) == b'*' {
                let at = self.loc();
                self.i += 2;
                while !(self.peek(0) == b'*' && self.peek(1) == b'/') {
                    if self.i >= self.s.len() {
                        return Err(format!("{at}: unterminated comment"));
                    }
                    self.bump();
                }
                self.i += 2;
            } else if self.peek(0) == b'#' && self.at_line_start() && self.is_directive() {
                if let Some(tok) = self.directive(notes)? {
                    return Ok(Some(tok));
                }
            } else {
                break;
            }
        }
        let at = self.loc();
        let Some(&b) = self.s.get(self.i) else { return Ok(None) };
        let tok = match b {
            b'"' => Tok::Str(self.string(&at)?),
            b'(' => {
                let start = self.i;
                let mut depth = 0;
                loop {
                    match self.bump() {
                        b'(' => depth += 1,
                        b')' if depth == 1 => break,
                        b')' => depth -= 1,
                        0 => return Err(format!("{at}: unterminated expression")),
                        _ => {}
                    }
                }
                Tok::Expr(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
            }
            b'/' if self.peek(1).is_ascii_alphabetic() => {
                self.bump();
                let start = self.i;
                while self.peek(0) != b'/' && self.i < self.s.len() && self.peek(0) != b'\n' {
                    self.bump();
                }
                let k = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                self.bump();
                Tok::Keyword(k)
            }
            _ if word_byte(b) => {
                let start = self.i;
                while word_byte(self.peek(0)) {
                    self.bump();
                }
                Tok::Word(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
            }
            _ if b"{}<>;=,&:[]/".contains(&b) => {
                self.bump();
                Tok::Punct(b as char)
            }
            _ => return Err(format!("{at}: unexpected character {:?}", b as char)),
        };
        Ok(Some((tok, at)))
    }

    /// A `#` line: `#include "x"` becomes a token; `#include <x>` is noted and skipped;
    /// anything else is refused.
    fn directive(&mut self, notes: &mut Vec<String>) -> Result<Option<(Tok, Loc)>, String> {
        let at = self.loc();
        let line = self.rest_of_line();
        if let Some(name) = line.strip_prefix("#include").map(str::trim) {
            if let Some(q) = name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
                return Ok(Some((Tok::Keyword(format!("#include {q}")), at)));
            }
            if name.starts_with('<') {
                notes.push(format!("{at}: {line}: a C header, not read; its macros stay symbols"));
                return Ok(None);
            }
        }
        Err(format!("{at}: the preprocessor line `{line}` is not supported (only #include); run it through cpp first"))
    }

    fn string(&mut self, at: &Loc) -> Result<String, String> {
        self.bump();
        let mut out = Vec::new();
        loop {
            match self.bump() {
                b'"' => break,
                b'\\' => out.push(self.bump()),
                0 | b'\n' => return Err(format!("{at}: unterminated string")),
                c => out.push(c),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

struct Parser {
    toks: Vec<(Tok, Loc)>,
    i: usize,
}

impl Parser {
    fn peek(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.i + k).map(|t| &t.0)
    }

    fn loc(&self) -> Loc {
        self.toks.get(self.i).or(self.toks.last()).map_or(Loc { file: "?".into(), line: 0 }, |t| t.1.clone())
    }

    fn next(&mut self) -> Result<(Tok, Loc), String> {
        let t = self.toks.get(self.i).cloned().ok_or_else(|| format!("{}: unexpected end of file", self.loc()))?;
        self.i += 1;
        Ok(t)
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        match self.next()? {
            (Tok::Punct(p), _) if p == c => Ok(()),
            (t, at) => Err(format!("{at}: expected `{c}`, found {t:?}")),
        }
    }

    fn word(&mut self) -> Result<(String, Loc), String> {
        match self.next()? {
            (Tok::Word(w), at) => Ok((w, at)),
            (t, at) => Err(format!("{at}: expected a name, found {t:?}")),
        }
    }

    fn file(&mut self, root: &mut Node) -> Result<(), String> {
        while let Some(tok) = self.peek(0).cloned() {
            let at = self.loc();
            match tok {
                Tok::Keyword(k) if k == "dts-v1" || k == "plugin" => {
                    self.i += 1;
                    self.expect(';')?;
                }
                Tok::Keyword(k) if k == "memreserve" => while self.next()?.0 != Tok::Punct(';') {},
                Tok::Keyword(k) if k == "delete-node" => {
                    self.i += 1;
                    self.expect('&')?;
                    let (label, _) = self.word()?;
                    self.expect(';')?;
                    root.remove_label(&label);
                }
                Tok::Punct('/') => {
                    self.i += 1;
                    self.expect('{')?;
                    self.body(root)?;
                }
                Tok::Punct('&') => {
                    self.i += 1;
                    let (label, _) = self.word()?;
                    let node = root
                        .find_label_mut(&label)
                        .ok_or_else(|| format!("{at}: &{label} names no node defined before it"))?;
                    self.expect('{')?;
                    self.body(node)?;
                }
                Tok::Word(_) => {
                    // a label before `/ {` or `&x {` at the top level
                    self.word()?;
                    self.expect(':')?;
                }
                t => return Err(format!("{at}: unexpected {t:?} at the top level")),
            }
        }
        Ok(())
    }

    /// The inside of `{ ... };` into `node`, up to and including the `};`.
    fn body(&mut self, node: &mut Node) -> Result<(), String> {
        loop {
            let at = self.loc();
            match self.peek(0).cloned() {
                Some(Tok::Punct('}')) => {
                    self.i += 1;
                    return self.expect(';');
                }
                Some(Tok::Keyword(k)) if k == "delete-node" || k == "delete-property" => {
                    self.i += 1;
                    let (name, _) = self.word()?;
                    self.expect(';')?;
                    if k == "delete-node" {
                        node.children.retain(|c| c.name != name);
                    } else {
                        node.props.retain(|p| p.name != name);
                    }
                }
                Some(Tok::Word(_)) => self.item(node)?,
                Some(t) => return Err(format!("{at}: unexpected {t:?} in node {}", node.name)),
                None => return Err(format!("{at}: node {} is not closed", node.name)),
            }
        }
    }

    /// A property or a child node (with its labels).
    fn item(&mut self, node: &mut Node) -> Result<(), String> {
        let mut labels = Vec::new();
        let (mut name, mut at) = self.word()?;
        while self.peek(0) == Some(&Tok::Punct(':')) {
            self.i += 1;
            labels.push(name);
            (name, at) = self.word()?;
        }
        match self.next()? {
            (Tok::Punct('{'), _) => {
                let i = match node.children.iter().position(|c| c.name == name) {
                    Some(i) => i,
                    None => {
                        node.children.push(Node::new(&name, at));
                        node.children.len() - 1
                    }
                };
                let child = &mut node.children[i];
                child.labels.extend(labels);
                self.body(child)
            }
            (Tok::Punct(';'), _) => {
                set_prop(node, Prop { name, values: Vec::new(), at });
                Ok(())
            }
            (Tok::Punct('='), _) => {
                let values = self.values()?;
                set_prop(node, Prop { name, values, at });
                Ok(())
            }
            (t, at) => Err(format!("{at}: after {name}, expected `{{`, `=` or `;`, found {t:?}")),
        }
    }

    fn values(&mut self) -> Result<Vec<Value>, String> {
        let mut out = Vec::new();
        loop {
            let (tok, at) = self.next()?;
            out.push(match tok {
                Tok::Str(s) => Value::Str(s),
                Tok::Punct('<') => Value::Cells(self.cells()?),
                Tok::Keyword(k) if k == "bits" => {
                    self.word()?;
                    self.expect('<')?;
                    Value::Cells(self.cells()?)
                }
                Tok::Punct('[') => Value::Bytes(self.bytes()?),
                Tok::Punct('&') => Value::PathRef(self.word()?.0),
                t => return Err(format!("{at}: unexpected {t:?} in a property value")),
            });
            match self.next()? {
                // `,` lexes as a word (property names hold commas) unless it stands alone
                (Tok::Punct(','), _) => continue,
                (Tok::Word(w), _) if w == "," => continue,
                (Tok::Punct(';'), _) => return Ok(out),
                (t, at) => return Err(format!("{at}: expected `,` or `;` after a value, found {t:?}")),
            }
        }
    }

    fn cells(&mut self) -> Result<Vec<Cell>, String> {
        let mut out = Vec::new();
        loop {
            let (tok, at) = self.next()?;
            out.push(match tok {
                Tok::Punct('>') => return Ok(out),
                Tok::Punct('&') => Cell::Ref(self.word()?.0),
                Tok::Expr(e) => Cell::Symbol(e),
                Tok::Word(w) => number(&w).map_or(Cell::Symbol(w), Cell::Num),
                t => return Err(format!("{at}: unexpected {t:?} in a cell list")),
            });
        }
    }

    fn bytes(&mut self) -> Result<Vec<u8>, String> {
        let mut hex = String::new();
        loop {
            match self.next()? {
                (Tok::Punct(']'), _) => break,
                (Tok::Word(w), _) => hex += &w,
                (t, at) => return Err(format!("{at}: unexpected {t:?} in a byte string")),
            }
        }
        (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|e| e.to_string())).collect()
    }
}

fn set_prop(node: &mut Node, p: Prop) {
    match node.props.iter_mut().find(|q| q.name == p.name) {
        Some(q) => *q = p,
        None => node.props.push(p),
    }
}

fn number(w: &str) -> Option<u64> {
    let w = w.trim_end_matches(['U', 'L', 'u', 'l']);
    match w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => w.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<(Node, Vec<String>), String> {
        let dir = std::env::temp_dir().join(format!("hetlab-dts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("inc.dtsi"), "/ { inc { x = <1>; }; };\n").unwrap();
        std::fs::write(dir.join("t.dts"), text).unwrap();
        read(&dir.join("t.dts"))
    }

    #[test]
    fn nodes_labels_refs_cells_includes_and_overlays() {
        let (root, notes) = parse(
            "/dts-v1/;\n#include <dt-bindings/x.h>\n#include \"inc.dtsi\"\n/ {\n  #address-cells = <2>;\n  \
             cpus { c0: cpu@0 { compatible = \"arm,cortex-a55\"; reg = <0x0>; opp = <&t>; irq = <GIC_SPI (1+2)>; }; };\n  \
             t: opp-table { o1 { opp-hz = /bits/ 64 <300000000>; b = [0a 0B]; }; };\n};\n&c0 { extra; };\n/ { /delete-node/ inc; };\n",
        )
        .unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        let cpu = root.find_label("c0").unwrap();
        assert_eq!(cpu.strings("compatible"), ["arm,cortex-a55"]);
        assert_eq!(cpu.refs("opp"), ["t"]);
        assert_eq!(cpu.at.line, 6);
        assert!(cpu.prop("extra").is_some());
        assert_eq!(
            cpu.prop("irq").unwrap().values,
            [Value::Cells(vec![Cell::Symbol("GIC_SPI".into()), Cell::Symbol("(1+2)".into())])]
        );
        assert_eq!(root.find_label("t").unwrap().child("o1").unwrap().num("opp-hz"), Some(300_000_000));
        assert_eq!(root.num("#address-cells"), Some(2));
        assert!(root.child("inc").is_none());
    }

    #[test]
    fn what_it_does_not_read_is_refused_with_the_place() {
        let e = parse("#define X 1\n/ { };\n").unwrap_err();
        assert!(e.contains("t.dts:1") && e.contains("#define X 1"), "{e}");
        let e = parse("/ { a = <1> };\n").unwrap_err();
        assert!(e.contains("t.dts:1"), "{e}");
        let e = parse("/include/ \"missing.dtsi\"\n").unwrap_err();
        assert!(e.contains("missing.dtsi") && e.contains("not next to it"), "{e}");
    }
}
