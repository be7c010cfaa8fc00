//! CPU lists ("0-3,5" as in sysfs `related_cpus`/`cpus` files) and thread affinity.

/// No kernel numbers a CPU at or beyond this: the largest `CONFIG_NR_CPUS` of any architecture
/// (x86's MAXSMP, 8192; arm64 allows 4096).
pub const MAX_CPU_NUMBER: usize = 8192;

/// Parses a kernel CPU list: space- or comma-separated numbers and ranges ("0-3 4", "0-3,6").
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for item in text.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()) {
        let bad = || {
            format!(
                "'{item}' in CPU list '{}' is not a CPU number (below {MAX_CPU_NUMBER}) or range like 0-3",
                text.trim()
            )
        };
        let cpu = |n: &str| n.parse::<usize>().ok().filter(|&n| n < MAX_CPU_NUMBER).ok_or_else(bad);
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (cpu(a)?, cpu(b)?);
                if b < a {
                    return Err(bad());
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(cpu(item)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// "0-3" / "0-1,4" for messages.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if j > i { format!("{}-{}", cpus[i], cpus[j]) } else { cpus[i].to_string() });
        i = j + 1;
    }
    out.join(",")
}

/// CPUs this process may run on (sched_getaffinity of the calling thread).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// Pins the calling thread to `cpu` (sched_setaffinity).
pub fn pin_current_thread(cpu: usize) -> Result<(), String> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(format!("CPU {cpu} is out of range"));
    }
    // SAFETY: as above; the set is fully initialised before the call.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        return Err(format!(
            "cannot pin to CPU {cpu}: sched_setaffinity: {err}; this process may run on CPUs {}",
            format_cpu_list(&allowed_cpus())
        ));
    }
    Ok(())
}

/// The calling thread's id.
pub fn gettid() -> u32 {
    // SAFETY: gettid has no failure mode.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_like_sysfs_writes_them() {
        assert_eq!(parse_cpu_list("0-3\n").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(parse_cpu_list("4 5 6 7").unwrap(), vec![4, 5, 6, 7]);
        assert_eq!(parse_cpu_list("0-1,4").unwrap(), vec![0, 1, 4]);
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<usize>::new());
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").unwrap_err().contains("'a'"));
        // a corrupt list cannot ask for billions of CPUs
        assert!(parse_cpu_list("0-18446744073709551615").is_err());
        assert!(parse_cpu_list("0-4000000000").unwrap_err().contains("below 8192"));
        assert!(parse_cpu_list("99999999").is_err());
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6]), "0-3,6");
    }

    #[test]
    fn pinning_to_an_allowed_cpu_works_and_a_missing_cpu_is_refused() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        let cpu = allowed[0];
        std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            assert_eq!(allowed_cpus(), vec![cpu]);
        })
        .join()
        .unwrap();
        let err = std::thread::spawn(|| pin_current_thread(1000).unwrap_err()).join().unwrap();
        assert!(err.contains("CPU 1000"), "{err}");
    }
}
