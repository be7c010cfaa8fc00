"""The per-class throughput fit (scripts/fit_core_classes.py): its validation table in docs/ is
what the measurements give, and the platform files state the fitted costs."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _fit_module():
    spec = importlib.util.spec_from_file_location("fit_core_classes", ROOT / "scripts" / "fit_core_classes.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def test_validation_table_is_regenerated_from_the_measurements():
    fit = _fit_module()
    assert fit.DOC.read_text() == fit.render(fit.load()), (
        "docs/validation-core-classes.md is stale: run python scripts/fit_core_classes.py --write"
    )


def test_platform_files_state_the_fitted_costs():
    fit = _fit_module()
    assert fit.platform_mismatches(fit.load()) == []


def test_held_back_errors_are_recomputed_from_ipc(tmp_path):
    """Each held-back row's error is (1/fitted cycles - measured IPC) / measured IPC; a class with
    two fit rows takes the mean of their 1/IPC."""
    fit = _fit_module()
    data = tmp_path / "m.toml"
    data.write_text(
        '[[devices]]\nid = "d"\ncore = "c"\nclock_mhz = 1000.0\n'
        '[[rows]]\ndevice = "d"\nclass = "fp32"\nrole = "fit"\nform = "a"\nmops = 2000.0\n'
        '[[rows]]\ndevice = "d"\nclass = "fp32"\nrole = "fit"\nform = "b"\nmops = 1000.0\n'
        '[[rows]]\ndevice = "d"\nclass = "fp32"\nrole = "held-back"\nform = "c"\nmops = 1000.0\n'
    )
    rows = fit.load(data)
    assert fit.fit(rows) == {("c", "fp32"): 0.75}
    ((row, predicted, err),) = fit.held_back(rows)
    assert row.form == "c" and abs(predicted - 1 / 0.75) < 1e-12
    assert abs(err - 100 * (1 / 0.75 - 1.0)) < 1e-9


def test_a_platform_value_off_the_fit_is_named(tmp_path):
    fit = _fit_module()
    text = (ROOT / "data" / "platforms" / "exynos5433.toml").read_text()
    bad = tmp_path / "p.toml"
    bad.write_text(
        text.replace('neon_fp32 = { unit = "fpu", cycles = 1.030 }', 'neon_fp32 = { unit = "fpu", cycles = 2.0 }')
    )
    (msg,) = fit.platform_mismatches(fit.load(), platforms=(bad,))
    assert "cortex-a53.neon_fp32 = 2.0" in msg and "fit 1.03" in msg


def test_the_a53_dependency_cpi_is_the_dhrystone_fit_and_held_back_programs_are_reported():
    fit = _fit_module()
    assert fit.integer_mismatch() is None
    fit_on, mixes, ratios = fit.integer_ratios()
    by_name = {r.benchmark: r for r in ratios}
    assert fit_on == "dhrystone" and abs(by_name["dhrystone"].measured - 1024 / 578) < 1e-12
    # 7-Zip: medians over the 64-bit boards only (the 32-bit rows are shown, not used)
    assert by_name["7zip-decompress"].rows == by_name["7zip-compress"].rows == 49
    classes = fit._code_classes()
    # the fitted value reproduces the measured ratio it was fitted on
    for name, dep in fit.integer_fits().items():
        assert abs(fit.predicted_ratio(classes, mixes[name], dep) - by_name[name].measured) < 1e-9


def test_a_platform_dependency_cpi_off_the_fit_is_named(tmp_path):
    fit = _fit_module()
    text = (ROOT / "data" / "platforms" / "exynos5433.toml").read_text()
    bad = tmp_path / "p.toml"
    bad.write_text(text.replace("dependency_cpi = 0.5334", "dependency_cpi = 0.6"))
    msg = fit.integer_mismatch(platform=bad)
    assert "cortex-a53.dependency_cpi = 0.6" in msg and "fit on dhrystone 0.5334" in msg


def test_four_vs_eight_runs_the_a53_dependency_cpi_fitted_on_each_held_back_program():
    from hetlab.experiments import four_vs_eight_sensitivity as sensitivity

    fit = _fit_module()
    fits = fit.integer_fits()
    held_back = ("7zip-decompress", "specint2000-164.gzip", "7zip-compress")
    assert sensitivity.A53_DEPENDENCY_CPI_FITS == tuple(round(fits[b], 3) for b in held_back)
