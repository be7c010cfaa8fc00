//! How each field of a trace line prints: comms and counter names made safe for the parsers,
//! counter values, CPU masks as the kernel's `%*pb`, task group paths, `sched_switch`'s
//! `prev_state` and the PELT signals' tail.

use super::{PeltSignals, PrevState, TraceThreads};

impl PrevState {
    /// As `TP_printk` shows it; the idle task is always `R`.
    pub(super) fn letters(self, tid: u32) -> &'static str {
        match (tid, self) {
            (0, _) => "R",
            (_, PrevState::Runnable) => "R+",
            (_, PrevState::Sleeping) => "S",
            (_, PrevState::Dead) => "X",
        }
    }

    /// The raw field (`__trace_sched_switch_state`, Linux 5.10): a preempted task reports
    /// TASK_REPORT_MAX (0x100), else the bit of its state's index (TASK_INTERRUPTIBLE 0x1,
    /// EXIT_DEAD 0x10; TASK_RUNNING 0).
    pub(super) fn raw(self, tid: u32) -> u32 {
        match (tid, self) {
            (0, _) => 0,
            (_, PrevState::Runnable) => 0x100,
            (_, PrevState::Sleeping) => 0x1,
            (_, PrevState::Dead) => 0x10,
        }
    }
}

/// The signals' tail of a `sched_pelt_*` line, as every one of them ends.
impl std::fmt::Display for PeltSignals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let PeltSignals { load, runnable, util, update_time_ns } = self;
        write!(f, "load={load} runnable={runnable} util={util} update_time={update_time_ns}")
    }
}

/// Comm of a thread as printed: every character that is not printable ASCII (spaces, tabs,
/// non-ASCII) becomes `_`, because both Perfetto (splits fields on spaces) and LISA (decodes
/// fields as ASCII) would mis-parse it. An empty or missing name prints as `<...>`, like the
/// kernel does for an unknown comm.
pub(super) fn sanitize_comm(name: Option<&str>) -> String {
    match name {
        Some(n) if !n.is_empty() => n.chars().map(|c| if c.is_ascii_graphic() { c } else { '_' }).collect(),
        _ => "<...>".to_string(),
    }
}

/// Counter names additionally must not contain `|` (the atrace field separator).
pub(super) fn sanitize_counter_name(name: &str) -> String {
    if name.is_empty() {
        return "counter".to_string();
    }
    name.chars().map(|c| if c.is_ascii_graphic() && c != '|' { c } else { '_' }).collect()
}

/// A value with at most 3 decimals, trailing zeros dropped (`12.5`, `7`, `0.125`).
pub(super) fn format_counter_value(value: f64) -> String {
    let mut s = format!("{value:.3}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

/// A CPU mask as the kernel's `%*pb` prints it for `nbits` CPUs (`bitmap_string`): hex, in
/// comma-separated 32-bit chunks from the highest, the first as wide as its bits need, zero
/// padded (`ff` for 8 CPUs, `0f` for CPUs 0-3 of 8, `3,ffffffff` for 34).
pub(super) fn cpumask_hex(mask: u64, nbits: usize) -> String {
    let nbits = nbits.clamp(1, 64);
    let mut out = String::new();
    let mut chunk_bits = if nbits.is_multiple_of(32) { 32 } else { nbits % 32 };
    let mut lo = nbits.div_ceil(32) * 32 - 32;
    loop {
        let val = (mask >> lo) & ((1u64 << chunk_bits) - 1);
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(&format!("{val:0width$x}", width = chunk_bits.div_ceil(4)));
        if lo == 0 {
            return out;
        }
        lo -= 32;
        chunk_bits = 32;
    }
}

/// A task group's path as LISA's sched_tp prints it (`cfs_rq_tg_path`), spaces and other
/// unprintables as `_`; an unknown index prints as `/`.
pub(super) fn group_path(threads: &TraceThreads, group: u32) -> String {
    match threads.groups.get(group as usize) {
        Some(p) => p.chars().map(|c| if c.is_ascii_graphic() { c } else { '_' }).collect(),
        None => "/".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_masks_print_as_bitmap_string() {
        assert_eq!(cpumask_hex(0xff, 8), "ff");
        assert_eq!(cpumask_hex(0x0f, 8), "0f");
        assert_eq!(cpumask_hex(0x3, 2), "3");
        assert_eq!(cpumask_hex(0x3f, 6), "3f");
        assert_eq!(cpumask_hex(0x0001, 16), "0001");
        assert_eq!(cpumask_hex(u32::MAX as u64, 32), "ffffffff");
        assert_eq!(cpumask_hex((1 << 34) - 1, 34), "3,ffffffff");
        assert_eq!(cpumask_hex(1 << 33, 40), "02,00000000");
        assert_eq!(cpumask_hex(u64::MAX, 64), "ffffffff,ffffffff");
    }

    #[test]
    fn counter_values_have_at_most_three_decimals() {
        assert_eq!(format_counter_value(12.5), "12.5");
        assert_eq!(format_counter_value(7.0), "7");
        assert_eq!(format_counter_value(0.125), "0.125");
        assert_eq!(format_counter_value(0.1234), "0.123");
        assert_eq!(format_counter_value(-2.0006), "-2.001");
        assert_eq!(format_counter_value(-0.0004), "0");
        assert_eq!(format_counter_value(100.0), "100");
        assert_eq!(sanitize_counter_name("a b|c\td"), "a_b_c_d");
        assert_eq!(sanitize_comm(Some("wörker 1")), "w_rker_1");
        assert_eq!(sanitize_comm(Some("")), "<...>");
    }
}
