//! Code classes end to end: a phase that declares its instruction mix runs at the bottleneck
//! CPI of the core it is on (`model::code_class`), and the mix is checked against every core
//! type before a run.

use hetlab_core::engine::{simulate, SimConfig};
use hetlab_core::platform::Platform;
use hetlab_core::result::RunResult;
use hetlab_core::workload::Workload;

fn run_on(platform: &Platform, cluster: &str, workload: &str) -> Result<RunResult, String> {
    let c = platform.cluster_index(cluster).unwrap();
    let plan = SimConfig::governor_plan(platform, "performance", &[], Some(c), &[]).unwrap();
    let mut config = SimConfig::new(plan);
    config.cluster = Some(c);
    simulate(platform, &Workload::from_toml("w.toml", workload)?, config)
}

const ALU: &str = "name='w'\n[[tasks]]\nname='t'\n[[tasks.phases]]\ninstructions=1e9\nmix={int_alu=1.0}\n";

#[test]
fn a_phase_with_a_mix_runs_at_its_bottleneck_cpi() {
    let p = Platform::builtin("exynos5433").unwrap();
    // Pure ALU work, no data references: CPI 0.5 (two ALU pipes) + 0.25 on the A57 at 1.9 GHz,
    // max(1/2, 0.5) + 0.5334 on the A53 at 1.3 GHz.
    let big = run_on(&p, "big", ALU).unwrap();
    let expect_s = 1e9 * 0.75 / 1.9e9;
    assert!((big.time_s / expect_s - 1.0).abs() < 0.01, "{} vs {expect_s}", big.time_s);
    let little = run_on(&p, "little", ALU).unwrap();
    let expect_s = 1e9 * 1.0335 / 1.3e9;
    assert!((little.time_s / expect_s - 1.0).abs() < 0.01, "{} vs {expect_s}", little.time_s);
}

#[test]
fn a_mix_the_core_cannot_run_is_refused_before_the_run() {
    let p = Platform::builtin("exynos5433").unwrap();
    // 32-bit execution: no ARMv8 crypto instructions.
    let aes = ALU.replace("{int_alu=1.0}", "{int_alu=0.5, crypto=0.5}");
    let e = run_on(&p, "big", &aes).unwrap_err();
    assert!(e.contains("'crypto'") && e.contains("cortex-a5"), "{e}");
    // A platform without code classes refuses a mix and names the fix.
    let e = run_on(&Platform::builtin("exynos5422").unwrap(), "big", ALU).unwrap_err();
    assert!(e.contains("no code_classes") && e.contains("use cpi"), "{e}");
    // mix and cpi together are ambiguous.
    let e = Workload::from_toml("w.toml", &ALU.replace("mix=", "cpi=1.0\nmix=")).unwrap_err();
    assert!(e.contains("either mix or cpi"), "{e}");
}

#[test]
fn an_aarch32_platform_cannot_describe_crypto_instructions() {
    let text = hetlab_core::platform::BUILTIN_PLATFORMS.iter().find(|(n, _)| *n == "exynos5433").unwrap().1;
    let bad = text.replace(
        "store = { unit = \"store\", cycles = 1.0 }",
        "store = { unit = \"store\", cycles = 1.0 }\ncrypto = { unit = \"fp\", cycles = 1.0 }",
    );
    assert_ne!(bad, text);
    let e = Platform::from_toml("p.toml", &bad).unwrap_err();
    assert!(e.contains("AArch32") && e.contains("crypto"), "{e}");
}
