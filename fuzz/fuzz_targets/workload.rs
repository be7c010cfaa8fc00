//! Any bytes as a workload: the first byte picks a generator spec (`ccbench:...`), a .toml file
//! or an rt-app .json file; loads, or is an error line; never a panic.
#![no_main]
use hetlab_core::rtapp::from_rtapp_json;
use hetlab_core::workload::Workload;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let r = match kind % 5 {
        0 => Workload::from_spec(&format!("ccbench:{text}")),
        1 => Workload::from_spec(&format!("periodic:{text}")),
        2 => Workload::from_spec(&format!("cpu-bound:{text}")),
        3 => Workload::from_toml("fuzz.toml", text),
        _ => from_rtapp_json("fuzz.json", text),
    };
    if let Ok(w) = r {
        let _ = w.nthreads();
    }
});
