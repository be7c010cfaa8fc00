//! hetlabd pingpong as a separate process: the inter-core latency matrix on this machine.

mod common;

use std::process::{Command, Stdio};

use common::*;

#[test]
fn pingpong_prints_a_matrix_of_one_way_latencies_for_every_pair() {
    let out = Command::new(hetlabd()).args(["pingpong", "--round-trips", "2000", "--repeats", "2"]).run();
    let text = String::from_utf8_lossy(&out.stdout);
    let allowed = hetlab_linux::cpus::allowed_cpus();
    if allowed.len() < 2 {
        assert_ne!(out.status.code(), Some(0));
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    eprint!("{text}");
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("pingpong: ns per one-way cache-line transfer"));
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header.len(), allowed.len() + 1);
    for (i, row) in lines.enumerate() {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[0], format!("cpu{}", allowed[i]));
        for (j, cell) in cells[1..].iter().enumerate() {
            if i == j {
                assert_eq!(*cell, "-");
            } else {
                let ns: f64 = cell.parse().unwrap();
                assert!(ns > 1.0 && ns < 1e6, "cpu{i} -> cpu{j}: {ns} ns");
            }
        }
    }
    // JSON: the same matrix
    let out = Command::new(hetlabd())
        .args(["pingpong", "--cpus", &format!("{},{}", allowed[0], allowed[1]), "--round-trips", "500", "--json"])
        .run();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["one_way_ns"][0][0], serde_json::Value::Null);
    assert!(doc["one_way_ns"][0][1].as_f64().unwrap() > 0.0);
}

#[test]
fn pingpong_rejects_bad_input_with_one_line() {
    for args in [
        &["pingpong", "--cpus", "100000"][..],
        &["pingpong", "--cpus", "0"],
        &["pingpong", "--round-trips", "many"],
        &["pingpong", "--repeats", "0"],
    ] {
        let out = Command::new(hetlabd()).args(args).run();
        let e = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(e.starts_with("hetlabd: error: ") && e.lines().count() == 1, "{args:?}: {e}");
    }
}

#[test]
fn pingpong_into_a_closed_pipe_is_quiet_and_into_a_full_disk_one_line() {
    let allowed = hetlab_linux::cpus::allowed_cpus();
    if allowed.len() < 2 {
        return;
    }
    let cpus = format!("{},{}", allowed[0], allowed[1]);
    let args = ["pingpong", "--cpus", &cpus, "--round-trips", "200", "--repeats", "1"];
    for json in [false, true] {
        let mut args = args.to_vec();
        args.extend(json.then_some("--json"));
        assert_quiet_into_a_closed_pipe(&args);
    }
    let dir = std::env::temp_dir().join(format!("hetlabd-pingpong-full-{}", std::process::id()));
    if let Some(sink) = dev_full(&dir) {
        let out = Command::new(hetlabd()).args(args).stdout(sink).stderr(Stdio::piped()).start().output();
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{e}");
        assert!(e.starts_with("hetlabd: error: cannot write standard output") && e.lines().count() == 1, "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
