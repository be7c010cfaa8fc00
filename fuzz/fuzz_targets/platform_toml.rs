//! Any bytes as a platform .toml: loads, or is an error line; never a panic. A platform that
//! loads has finite, positive capacities.
#![no_main]
use hetlab_core::platform::Platform;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Platform::from_toml("fuzz.toml", text) {
        Ok(p) => {
            for c in 0..p.clusters.len() {
                assert!(p.cpu_capacity(c) <= 1024);
            }
        }
        Err(e) => assert!(!e.is_empty()),
    }
});
