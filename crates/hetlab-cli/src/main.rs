//! hetlabd: hetlab on a real Linux board, as one static binary (no Python needed).
//! Every error is one line, "hetlabd: error: ...", naming the thing and the fix; exit code 1
//! (2 for a command-line mistake).

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(hetlab_cli::run("hetlabd", &argv));
}
