"""The code stays readable as a map: no non-test source file over 1,000 lines and no function of
150 lines or more in hetlab-core, hetlab-linux and python/hetlab (tests included for functions).

Rust is read with a small lexer (strings, raw strings, chars and lifetimes, comments) so that a
brace inside a string or a comment never counts; a file's trailing `#[cfg(test)] mod tests { ... }`
is test code and does not count towards its size.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUST_DIRS = [ROOT / "crates/hetlab-core", ROOT / "crates/hetlab-linux"]
PYTHON_DIR = ROOT / "python/hetlab"
MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 149

RAW_STRING = re.compile(r'b?r(#*)"')


def rust_code(text: str) -> str:
    """`text` with every string, char literal and comment blanked (newlines kept), so that
    braces and keywords left are code."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif (m := RAW_STRING.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i : j + 1]))
            i = j + 1
        elif c == "'":
            # a char literal ('a', '\n', '\u{1F600}', '"'), else a lifetime or a label
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(code: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    raise AssertionError("unbalanced braces")


def rust_functions(code: str):
    """(name, first line, lines) of every function with a body."""
    for m in re.finditer(r"\bfn\s+(\w+)", code):
        # the body opens at the first `{` after the signature, unless a `;` ends it first
        j = m.end()
        depth = 0
        while j < len(code):
            ch = code[j]
            if ch in "([<":
                depth += 1
            elif ch in ")]>" and depth:
                depth -= 1
            elif ch == ";" and depth == 0:
                break
            elif ch == "{" and depth == 0:
                end = matching_brace(code, j)
                first = code.count("\n", 0, m.start()) + 1
                last = code.count("\n", 0, end) + 1
                yield m.group(1), first, last - first + 1
                break
            j += 1


def rust_source_lines(code: str) -> int:
    """Lines of `code` before a trailing `#[cfg(test)] mod tests { ... }` (the whole file if
    it has none)."""
    m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", code)
    if m and matching_brace(code, m.end() - 1) >= len(code.rstrip()) - 1:
        return code.count("\n", 0, m.start())
    return code.count("\n") + 1


def is_test_file(path: Path) -> bool:
    return "tests" in path.parts or path.name == "tests.rs" or path.parts[-2:-1] == ("benches",)


def rust_files():
    for d in RUST_DIRS:
        yield from sorted(p for p in d.rglob("*.rs") if "target" not in p.parts)


def test_the_lexer_ignores_braces_in_strings_chars_and_comments():
    code = rust_code('fn a() { let s = "}"; let c = \'{\'; // }\n let r = r#"}"#; /* { */ }\nfn b(x: &\'a str);\n')
    assert [(name, lines) for name, _, lines in rust_functions(code)] == [("a", 2)]


@pytest.mark.parametrize("path", list(rust_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_rust_files_and_functions_stay_small(path):
    code = rust_code(path.read_text())
    if not is_test_file(path):
        lines = rust_source_lines(code)
        assert lines <= MAX_FILE_LINES, f"{path.relative_to(ROOT)}: {lines} lines of source; split it by job"
    long = [(name, first, n) for name, first, n in rust_functions(code) if n > MAX_FUNCTION_LINES]
    assert not long, f"{path.relative_to(ROOT)}: functions of 150 lines or more (name, line, lines): {long}"


@pytest.mark.parametrize("path", sorted(PYTHON_DIR.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_python_files_and_functions_stay_small(path):
    text = path.read_text()
    assert text.count("\n") <= MAX_FILE_LINES, f"{path.relative_to(ROOT)}: over {MAX_FILE_LINES} lines"
    long = [
        (node.name, node.lineno, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno >= MAX_FUNCTION_LINES
    ]
    assert not long, f"{path.relative_to(ROOT)}: functions of 150 lines or more (name, line, lines): {long}"


def test_impl_engine_lives_in_the_loop_and_the_flow_room_only():
    engine = ROOT / "crates/hetlab-core/src/engine"
    hosts = {
        str(p.relative_to(engine))
        for p in engine.rglob("*.rs")
        if "tests" not in p.parts and re.search(r"\bimpl(<[^>]*>)?\s+Engine\b", rust_code(p.read_text()))
    }
    assert hosts and all(h == "mod.rs" or h == "flow.rs" or h.startswith("flow/") for h in hosts), sorted(hosts)
