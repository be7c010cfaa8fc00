//! Any bytes as a model.json: a model that loads and validates is evaluated on counts taken
//! from the input and must terminate (no cycle, bounded depth) without a panic.
#![no_main]
use hetlab_core::tree::AntiSnoopModel;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(model) = AntiSnoopModel::from_json(text) else { return };
    for (_, tree) in &model.trees {
        if tree.validate().is_err() {
            continue;
        }
        let seed = data.len() as u64;
        let counts: Vec<(u64, u64)> =
            (0..tree.features.len() as u64).map(|f| (seed.wrapping_mul(f + 7) << 20, f % 3)).collect();
        let _ = tree.predict_counts(&counts);
        let values: Vec<f64> = counts.iter().map(|&(n, d)| n as f64 / (d.max(1)) as f64).collect();
        let _ = tree.predict(&values);
    }
});
