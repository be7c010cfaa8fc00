//! The kernel's energy model as debugfs shows it (`/sys/kernel/debug/energy_model`, Linux 5.10
//! `em_debug_create_pd`): a directory per performance domain holding `cpus` (a CPU list) and a
//! `ps:<kHz>/` directory per performance state with `frequency` (kHz) and `power` (mW); kernels
//! before 5.10 named them `cs:<kHz>`. Read for `hetlab platform from-board` and `import-em`.
//!
//! The powers' units are read as the kernel marks them: a domain's `units` file (Linux 5.11 to
//! 6.8: `milliWatts`, from 5.19 `microWatts`, or `bogoWatts` for an abstract scale) or its
//! `flags` file (from 6.9: `%#lx` of the domain's flags, EM_PERF_DOMAIN_MICROWATTS bit 0,
//! EM_PERF_DOMAIN_ARTIFICIAL bit 2); a domain with neither is 5.10's, in mW. µW are read back
//! as mW (rounded, at least 1); an abstract scale is kept as it is and marked so.
//!
//! The tree may be any directory (a board's debugfs, a copy, an export), so every attribute is
//! read as hetlabd reads sysfs ([`crate::infile`]: a regular file of at most a page, without
//! blocking), CPU lists are the kernel's and bounded ([`crate::cpus::parse_cpu_list`]), and every
//! number is one the kernel could show, each state directory is named after its frequency and each
//! CPU is in one domain; what is not is one error naming the file and the value.

use std::fs;
use std::path::{Path, PathBuf};

use hetlab_core::platform::{EmDomainSpec, EmStateSpec, EmUnits, EM_MAX_POWER_MW};

use crate::cpus::format_cpu_list;
use crate::display;
use crate::infile::{read_text, SYSFS_ATTR_MAX_BYTES};

/// The domains under `root`, each with its states in ascending frequency, ordered by first CPU.
pub fn read(root: &Path) -> Result<Vec<EmDomainSpec>, String> {
    if !root.is_dir() {
        return Err(format!("'{}' is not a directory laid out like /sys/kernel/debug/energy_model", display(root)));
    }
    let mut domains = Vec::new();
    for dir in entries(root)? {
        let cpus_file = dir.join("cpus");
        if fs::symlink_metadata(&cpus_file).is_err() {
            continue; // not a performance domain
        }
        let text = attribute(&cpus_file)?;
        let cpus = crate::cpus::parse_cpu_list(&text)
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| format!("'{}' holds '{}', not a CPU list such as 0-3", display(&cpus_file), text.trim()))?;
        let units = power_units(&dir)?;
        let mut ps = Vec::new();
        for state in entries(&dir)? {
            let name = state.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let Some((prefix, suffix)) = name.split_once(':').filter(|(p, _)| *p == "ps" || *p == "cs") else {
                continue;
            };
            if !state.is_dir() {
                continue;
            }
            // the kernel names a state's directory after its frequency (`"ps:%lu"`, `"cs:%lu"`
            // before 5.10): any other name is no state the kernel made
            let Some(named_khz) = suffix
                .parse::<u64>()
                .ok()
                .filter(|khz| khz.to_string() == suffix && (1..=u64::from(u32::MAX)).contains(khz))
            else {
                return Err(format!(
                    "'{}' is not named after a frequency in kHz, as the kernel names a performance state's \
                     directory ({prefix}:<kHz>, e.g. {prefix}:200000); remove or rename it",
                    display(&state)
                ));
            };
            let frequency_file = state.join("frequency");
            let frequency_khz = number(&frequency_file, 1, u64::from(u32::MAX), "a frequency in kHz")?;
            if frequency_khz != named_khz {
                return Err(format!(
                    "'{}' holds '{frequency_khz}', not the {named_khz} kHz its directory {name} is named after (the \
                     kernel names it after the frequency); correct the file or the directory's name",
                    display(&frequency_file)
                ));
            }
            let power_mw = match units {
                Units::Micro => {
                    let uw = number(&state.join("power"), 1, u64::from(EM_MAX_POWER_MW) * 1000, "a power in µW")?;
                    ((uw + 500) / 1000).clamp(1, u64::from(EM_MAX_POWER_MW))
                }
                Units::Milli => number(&state.join("power"), 1, u64::from(EM_MAX_POWER_MW), "a power in mW")?,
                Units::Bogo => number(&state.join("power"), 1, u64::from(EM_MAX_POWER_MW), "a power in bogoWatts")?,
            };
            ps.push(EmStateSpec { frequency_khz: frequency_khz as u32, power_mw: power_mw as u32 });
        }
        if ps.is_empty() {
            return Err(format!("'{}' has no ps:<kHz> (or cs:<kHz>) directories", display(&dir)));
        }
        ps.sort_by_key(|s| s.frequency_khz);
        // ps:<kHz> beside cs:<kHz> of the same frequency: two states the kernel never makes
        if let Some(w) = ps.windows(2).find(|w| w[0].frequency_khz == w[1].frequency_khz) {
            return Err(format!(
                "'{}' has two performance states at {} kHz (ps: and cs: directories of one frequency); keep one",
                display(&dir),
                w[0].frequency_khz
            ));
        }
        let units = if units == Units::Bogo { EmUnits::BogoWatts } else { EmUnits::MilliWatts };
        domains.push((cpus_file, EmDomainSpec { cpus, ps, units }));
    }
    if domains.is_empty() {
        return Err(format!("'{}' holds no performance domain (a directory with a cpus file)", display(root)));
    }
    // a CPU is in one performance domain (`em_dev_register_perf_domain` refuses a CPU that
    // already has one): overlapping lists are no tree the kernel shows
    for (i, (file_a, a)) in domains.iter().enumerate() {
        for (file_b, b) in &domains[i + 1..] {
            if let Some(cpu) = a.cpus.iter().find(|c| b.cpus.contains(c)) {
                return Err(format!(
                    "'{}' ({}) and '{}' ({}) share CPU {cpu}: a CPU is in one performance domain; correct the CPU lists",
                    display(file_a),
                    format_cpu_list(&a.cpus),
                    display(file_b),
                    format_cpu_list(&b.cpus)
                ));
            }
        }
    }
    let mut domains: Vec<EmDomainSpec> = domains.into_iter().map(|(_, d)| d).collect();
    domains.sort_by_key(|d| d.cpus[0]);
    Ok(domains)
}

/// The units a domain's powers are in, as the kernel marks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Units {
    Milli,
    Micro,
    Bogo,
}

/// EM_PERF_DOMAIN_MICROWATTS and EM_PERF_DOMAIN_ARTIFICIAL (include/linux/energy_model.h).
const FLAG_MICROWATTS: u64 = 1 << 0;
const FLAG_ARTIFICIAL: u64 = 1 << 2;

/// Domain `dir`'s units: its `units` file, else its `flags` file, else 5.10's mW.
fn power_units(dir: &Path) -> Result<Units, String> {
    let units_file = dir.join("units");
    if fs::symlink_metadata(&units_file).is_ok() {
        return match attribute(&units_file)?.trim() {
            "milliWatts" => Ok(Units::Milli),
            "microWatts" => Ok(Units::Micro),
            "bogoWatts" => Ok(Units::Bogo),
            other => Err(format!(
                "'{}' holds '{other}', not a unit the kernel shows (milliWatts, microWatts or bogoWatts)",
                display(&units_file)
            )),
        };
    }
    let flags_file = dir.join("flags");
    if fs::symlink_metadata(&flags_file).is_ok() {
        let text = attribute(&flags_file)?;
        let text = text.trim();
        // "%#lx": 0 prints as "0", anything else with its 0x
        let flags = match text.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => text.parse::<u64>().ok().filter(|&f| f == 0),
        };
        let flags = flags.ok_or_else(|| {
            format!("'{}' holds '{text}', not the kernel's flags (a hex number such as 0x1)", display(&flags_file))
        })?;
        return Ok(if flags & FLAG_MICROWATTS != 0 && flags & FLAG_ARTIFICIAL == 0 {
            Units::Micro
        } else {
            Units::Bogo
        });
    }
    Ok(Units::Milli)
}

/// The entries of `dir`, sorted (the order does not depend on the file system's).
fn entries(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = fs::read_dir(dir).map_err(|e| format!("cannot list '{}': {e}", display(dir)))?;
    let mut out: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    out.sort();
    Ok(out)
}

fn attribute(path: &Path) -> Result<String, String> {
    read_text(path, SYSFS_ATTR_MAX_BYTES, true)
}

/// The whole number `path` holds, within `lo..=hi` (`what` names it in the error).
fn number(path: &Path, lo: u64, hi: u64, what: &str) -> Result<u64, String> {
    let text = attribute(path)?;
    let text = text.trim();
    text.parse::<u64>()
        .ok()
        .filter(|v| (lo..=hi).contains(v))
        .ok_or_else(|| format!("'{}' holds '{text}', not {what} ({lo}..={hi})", display(path)))
}

#[cfg(test)]
mod tests {
    fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }

    use super::*;

    fn tree(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("hetlab-em-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        for (dom, cpus, states) in
            [("cpu4", "4-7", [(2000000, 2000), (200000, 150)]), ("cpu0", "0-3", [(1400000, 300), (200000, 20)])]
        {
            for (khz, mw) in states {
                let ps = d.join(dom).join(format!("ps:{khz}"));
                fs::create_dir_all(&ps).unwrap();
                fs::write(ps.join("frequency"), format!("{khz}\n")).unwrap();
                fs::write(ps.join("power"), format!("{mw}\n")).unwrap();
                fs::write(ps.join("cost"), "1\n").unwrap();
            }
            fs::write(d.join(dom).join("cpus"), format!("{cpus}\n")).unwrap();
        }
        d
    }

    #[test]
    fn domains_by_first_cpu_states_ascending() {
        let d = tree("read");
        let em = read(&d).unwrap();
        assert_eq!(em.iter().map(|x| x.cpus.clone()).collect::<Vec<_>>(), vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert_eq!(
            em[1].ps,
            vec![
                EmStateSpec { frequency_khz: 200000, power_mw: 150 },
                EmStateSpec { frequency_khz: 2000000, power_mw: 2000 }
            ]
        );
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn what_the_kernel_could_not_show_is_one_error_naming_the_file_and_value() {
        for (file, text, says) in [
            ("cpu0/cpus", "0-99999999999", "'0-99999999999', not a CPU list"),
            ("cpu0/cpus", "", "not a CPU list"),
            ("cpu0/ps:200000/frequency", "abc", "holds 'abc', not a frequency in kHz"),
            ("cpu0/ps:200000/frequency", "0", "holds '0', not a frequency"),
            ("cpu0/ps:200000/power", "-5", "holds '-5', not a power in mW (1..=65535)"),
            ("cpu0/ps:200000/power", "1000000000000000000000000000000", "not a power in mW"),
        ] {
            let d = tree("bad");
            fs::write(d.join(file), text).unwrap();
            let e = read(&d).unwrap_err();
            assert!(e.contains(file) && e.contains(says) && !e.contains('\n'), "{file}: {e}");
        }
        let d = tree("bad");
        fs::write(d.join("cpu0/cpus"), b"\xff\n").unwrap();
        assert!(read(&d).unwrap_err().contains("not text"));
        fs::remove_file(d.join("cpu0/ps:200000/power")).unwrap();
        fs::write(d.join("cpu0/cpus"), "0-3\n").unwrap();
        assert!(read(&d).unwrap_err().contains("cpu0/ps:200000/power"));
        let _ = fs::remove_dir_all(&d);
        assert!(read(&d).unwrap_err().contains("is not a directory"));
    }

    /// Issue 34, class 9: import-em wrote a ps: and a cs: directory of one frequency as two states.
    #[test]
    fn two_states_of_one_frequency_are_refused() {
        let d = tree("dup");
        copy_dir(&d.join("cpu0/ps:200000"), &d.join("cpu0/cs:200000"));
        let e = read(&d).unwrap_err();
        assert!(e.contains("has two performance states at 200000 kHz"), "{e}");
    }

    #[test]
    fn a_state_directory_is_named_after_its_frequency_as_the_kernel_names_it() {
        // kernels before 5.10 named them cs:<kHz>
        let d = tree("cs");
        fs::rename(d.join("cpu0/ps:200000"), d.join("cpu0/cs:200000")).unwrap();
        assert_eq!(read(&d).unwrap()[0].ps[0], EmStateSpec { frequency_khz: 200000, power_mw: 20 });
        // a file named like a state is no state; neither is a directory named otherwise
        fs::write(d.join("cpu0/ps:xyz"), "1\n").unwrap();
        fs::create_dir_all(d.join("cpu0/opp:1")).unwrap();
        assert_eq!(read(&d).unwrap()[0].ps.len(), 2);
        let _ = fs::remove_dir_all(&d);
        for name in ["ps:xyz", "ps:", "ps:0200000", "ps:+200000", "ps:0", "ps:4294967296", "cs:1.5"] {
            let d = tree("badname");
            let state = d.join("cpu0").join(name);
            fs::create_dir_all(&state).unwrap();
            for f in ["frequency", "power", "cost"] {
                fs::write(state.join(f), "1\n").unwrap();
            }
            let e = read(&d).unwrap_err();
            let prefix = &name[..2];
            assert_eq!(
                e,
                format!(
                    "'{}' is not named after a frequency in kHz, as the kernel names a performance state's directory \
                     ({prefix}:<kHz>, e.g. {prefix}:200000); remove or rename it",
                    display(&state)
                ),
                "{name}"
            );
            let _ = fs::remove_dir_all(&d);
        }
        let d = tree("badfreq");
        fs::write(d.join("cpu0/ps:200000/frequency"), "250000\n").unwrap();
        let e = read(&d).unwrap_err();
        assert_eq!(
            e,
            format!(
                "'{}' holds '250000', not the 200000 kHz its directory ps:200000 is named after (the kernel names it \
                 after the frequency); correct the file or the directory's name",
                display(&d.join("cpu0/ps:200000/frequency"))
            )
        );
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn a_cpu_is_in_one_performance_domain() {
        let d = tree("overlap");
        fs::write(d.join("cpu0/cpus"), "0-4\n").unwrap();
        let e = read(&d).unwrap_err();
        assert_eq!(
            e,
            format!(
                "'{}' (0-4) and '{}' (4-7) share CPU 4: a CPU is in one performance domain; correct the CPU lists",
                display(&d.join("cpu0/cpus")),
                display(&d.join("cpu4/cpus"))
            )
        );
        fs::write(d.join("cpu0/cpus"), "0-3,5\n").unwrap();
        let e = read(&d).unwrap_err();
        assert!(e.contains("(0-3,5) and") && !e.contains('\n'), "{e}");
        // the same list twice (a copied domain) overlaps too
        fs::write(d.join("cpu0/cpus"), "4-7\n").unwrap();
        assert!(read(&d).unwrap_err().contains("share CPU 4"));
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn powers_are_read_in_the_units_the_kernel_marks() {
        // 5.11..6.8: a `units` file; from 6.9: `flags`; none: 5.10's mW
        for (tag, file, text, want_mw, want_units) in [
            ("milli", "units", "milliWatts\n", [150, 2000], EmUnits::MilliWatts),
            ("micro", "units", "microWatts\n", [1, 2], EmUnits::MilliWatts),
            ("bogo", "units", "bogoWatts\n", [150, 2000], EmUnits::BogoWatts),
            ("flags-uw", "flags", "0x1\n", [1, 2], EmUnits::MilliWatts),
            ("flags-0", "flags", "0\n", [150, 2000], EmUnits::BogoWatts),
            ("flags-art", "flags", "0x5\n", [150, 2000], EmUnits::BogoWatts),
        ] {
            let d = tree(tag);
            for dom in ["cpu0", "cpu4"] {
                fs::write(d.join(dom).join(file), text).unwrap();
            }
            let em = read(&d).unwrap();
            // µW: 150 µW and 2000 µW are 0.15 mW (at least 1) and 2 mW
            let big: Vec<u32> = em[1].ps.iter().map(|s| s.power_mw).collect();
            assert_eq!((big.as_slice(), em[1].units), (&want_mw[..], want_units), "{tag}");
        }
        let d = tree("bad-units");
        fs::write(d.join("cpu4").join("units"), "kiloWatts\n").unwrap();
        assert!(read(&d).unwrap_err().contains("not a unit the kernel shows"));
        fs::write(d.join("cpu4").join("units"), "bogoWatts\n").unwrap();
        fs::write(d.join("cpu0").join("flags"), "1\n").unwrap();
        assert!(read(&d).unwrap_err().contains("not the kernel's flags"));
    }
}
