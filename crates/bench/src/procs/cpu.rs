//! CPU time of processes, from `/proc/PID/stat`.

use std::path::Path;

/// Clock ticks per second of /proc's counters.
fn ticks() -> f64 {
    // SAFETY: sysconf reads a constant of the system and touches no memory of ours.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// The fields of `/proc/PID/stat` after the command name (which may hold spaces): index 0 is
/// the state (field 3 of proc(5)), so field N is at N − 3.
fn stat_fields(pid: u32) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<Vec<u64>> {
    let rest = &text[text.rfind(')')? + 1..];
    // The state is a letter; keep its place with a 0.
    Some(
        rest.split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect(),
    )
}

/// utime + stime of one process, in seconds (0 when it is gone).
pub fn own(pid: u32) -> f64 {
    stat_fields(pid)
        .and_then(|f| Some((f.get(11)? + f.get(12)?) as f64 / ticks()))
        .unwrap_or(0.0)
}

/// A process with its reaped children (cutime + cstime) and its live children.
pub fn tree(pid: u32) -> f64 {
    let Some(f) = stat_fields(pid) else {
        return 0.0;
    };
    let mut total = f.get(11..15).map_or(0, |t| t.iter().sum::<u64>()) as f64 / ticks();
    let Ok(dir) = std::fs::read_dir(Path::new("/proc")) else {
        return total;
    };
    for entry in dir.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if stat_fields(child).and_then(|f| f.get(1).copied()) == Some(u64::from(pid)) {
            total += own(child);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_spaces_in_the_name_parse() {
        let line = "42 (postgres: bench db) S 7 42 42 0 -1 4194560 100 0 0 0 250 50 3 4 20 0";
        let f = parse_stat(line).unwrap();
        assert_eq!(f[1], 7, "ppid");
        assert_eq!((f[11], f[12], f[13], f[14]), (250, 50, 3, 4));
    }
}
