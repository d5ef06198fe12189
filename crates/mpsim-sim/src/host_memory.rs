//! The host's memory, watched so that a simulation too big for it ends with an error rather
//! than a kill: a run whose ranks cannot fit is refused before it starts ([`check_fits`]), and a
//! run that grows toward exhausting the host (its programs' own data, millions of messages in
//! flight) is stopped while the host still has a margin left ([`MemoryWatch`]). Without this, Linux's
//! out-of-memory killer ends the process with SIGKILL and not a word, after minutes of paging.
//!
//! Results never depend on it: a run that fits never sees it, and one that does not stops with
//! `Error::NoMemory` (a report as of the stop, S16/D2). It reads `/proc/meminfo`, the memory
//! files of the process's own control group and its own limits (Linux; elsewhere it does
//! nothing), paced by the
//! host clock, which it reads every [`CHECK_EVERY`] events: once a second while there is room
//! to spare, up to every 10 ms close to the limit.

use std::time::{Duration, Instant};

use mpsim_proto::error::Error;

/// Events between two looks at the host clock (a look is about 40 ns; an event 100 ns and up).
pub(crate) const CHECK_EVERY: u64 = 64;

/// The fastest a process takes memory from the host, bytes per second of host time: fresh
/// pages are faulted in one by one, a few GB/s on any machine (0.3 GB/s on the reference one).
const FASTEST_GROWTH: u64 = 8 << 30;

/// Host time between two reads of the host's memory (a read is about 100 us: a handful of
/// files): the time the fastest growth would take to use up what is left above the floor, but
/// no less than 10 ms and no more than a second. A run with room to spare then reads it once
/// a second; one close to the floor, every 10 ms.
fn period(available: u64, floor: u64) -> Duration {
    let headroom = available.saturating_sub(floor);
    Duration::from_secs_f64(headroom as f64 / FASTEST_GROWTH as f64)
        .clamp(Duration::from_millis(10), Duration::from_secs(1))
}

/// The least memory a run leaves the host before it is stopped: 1% of the host's memory, and
/// never less than 128 MiB.
pub(crate) fn default_floor(total: u64) -> u64 {
    (total / 100).max(128 << 20)
}

/// The field `name` (e.g. `MemTotal:`) of a `/proc` text whose lines read `name  N kB`, in
/// bytes: `/proc/meminfo`, `/proc/self/status`.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `MemAvailable` and `MemTotal` of a `/proc/meminfo` text, in bytes.
pub(crate) fn parse_meminfo(meminfo: &str) -> (Option<u64>, Option<u64>) {
    (
        kib_field(meminfo, "MemAvailable:"),
        kib_field(meminfo, "MemTotal:"),
    )
}

/// The memory this process may still take and the most it may hold, bytes, where the host
/// says (Linux): the machine's (`/proc/meminfo`), or less under a memory-limited control group
/// (a container, a batch job), whose limit the system enforces with the same kill, or under
/// the process's own limits (`ulimit -v`, `ulimit -d`), past which the allocator aborts it.
fn host_memory() -> Option<(u64, u64)> {
    let (Some(available), Some(total)) =
        parse_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?)
    else {
        return None;
    };
    let tighter = |(a, t): (u64, u64), (room, limit): (u64, u64)| (a.min(room), t.min(limit));
    let mut memory = (available, total);
    if let Some(cgroup) = cgroup_room() {
        memory = tighter(memory, cgroup);
    }
    if let Some(rlimit) = rlimit_room() {
        memory = tighter(memory, rlimit);
    }
    Some(memory)
}

/// Room left under this process's address-space and data-size limits, and the tighter
/// limit, bytes, if either is set: [`rlimit_limit`] of `/proc/self/limits` and
/// `/proc/self/status`.
fn rlimit_room() -> Option<(u64, u64)> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    rlimit_limit(&limits, &status)
}

/// [`rlimit_room`] from the texts of `/proc/self/limits` and `/proc/self/status`: for the
/// address space (`RLIMIT_AS` against `VmSize`) and the data size (`RLIMIT_DATA` against
/// `VmData`, which Linux counts as its private writable mappings), the soft limit less what
/// is in use; the tighter of the two. `unlimited` is no limit.
pub(crate) fn rlimit_limit(limits: &str, status: &str) -> Option<(u64, u64)> {
    let soft_limit = |name: &str| -> Option<u64> {
        let rest = limits.lines().find_map(|l| l.strip_prefix(name))?;
        rest.split_whitespace().next()?.parse().ok()
    };
    [
        ("Max address space", "VmSize:"),
        ("Max data size", "VmData:"),
    ]
    .into_iter()
    .filter_map(|(limit, used)| {
        let limit = soft_limit(limit)?;
        Some((limit.saturating_sub(kib_field(status, used)?), limit))
    })
    .min()
}

/// Room left under this process's control-group memory limit and the limit, bytes, if it has
/// one: `limit - (usage - inactive file cache)` (the cache the system reclaims before it kills,
/// counted as free as `MemAvailable` counts it). cgroup v2 and v1 layouts.
fn cgroup_room() -> Option<(u64, u64)> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    cgroups.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (dir, files) = if id == "0" && controllers.is_empty() {
            (
                format!("/sys/fs/cgroup{path}"),
                ["memory.max", "memory.current", "inactive_file"],
            )
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                format!("/sys/fs/cgroup/memory{path}"),
                [
                    "memory.limit_in_bytes",
                    "memory.usage_in_bytes",
                    "total_inactive_file",
                ],
            )
        } else {
            return None;
        };
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let stat = read("memory.stat").unwrap_or_default();
        cgroup_limit(&read(files[0])?, &read(files[1])?, &stat, files[2])
    })
}

/// [`cgroup_room`] from the texts of a control group's limit, usage and `memory.stat` files
/// (`inactive` names the stat of the reclaimable file cache). No limit (`max`, or v1's
/// near-2^63 "unlimited") is `None`.
pub(crate) fn cgroup_limit(
    limit: &str,
    usage: &str,
    stat: &str,
    inactive: &str,
) -> Option<(u64, u64)> {
    let limit: u64 = limit.trim().parse().ok().filter(|&l| l < 1 << 60)?;
    let usage: u64 = usage.trim().parse().ok()?;
    let cache = stat
        .lines()
        .find_map(|l| {
            l.strip_prefix(inactive)?
                .strip_prefix(' ')?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0u64);
    Some((limit.saturating_sub(usage.saturating_sub(cache)), limit))
}

const GIB: f64 = (1u64 << 30) as f64;

/// Refuses a run of `n` ranks that need at least `per_rank` bytes each (a lower bound: kernel
/// state, future, handles) when that exceeds what the host has available: such a run would
/// otherwise be killed, or take the host down, part way. So it never refuses a run that fits.
pub(crate) fn check_fits(n: u32, per_rank: u64) -> Result<(), Error> {
    let Some((available, _)) = host_memory() else {
        return Ok(());
    };
    let needed = u64::from(n) * per_rank;
    if needed <= available {
        return Ok(());
    }
    Err(Error::NoMemory {
        what: format!(
            "{n} ranks need at least {:.1} GiB ({per_rank} bytes per rank before any message); \
             this host has {:.1} GiB available",
            needed as f64 / GIB,
            available as f64 / GIB
        ),
    })
}

/// Watches the host's available memory during a run (the simulator's run loop, and the
/// launcher during a threads run): [`MemoryWatch::poll`] as often as one likes; it reads the
/// host only once per period and says when less than the floor is left.
///
/// ```
/// use mpsim_sim::MemoryWatch;
///
/// let mut relaxed = MemoryWatch::new(Some(0));
/// assert!(relaxed.poll().is_none(), "nothing is ever below a floor of 0 bytes");
/// ```
#[derive(Debug)]
pub struct MemoryWatch {
    /// Bytes the run must leave the host; `None`: the default for the host's size.
    floor: Option<u64>,
    /// When the host's memory was read last; `None` before the first read (made at once).
    last: Option<Instant>,
    /// Host time until the next read ([`period`]).
    wait: Duration,
    /// No `/proc/meminfo` here: nothing to watch.
    off: bool,
}

/// What [`MemoryWatch::poll`] found when the host was short of memory, bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shortage {
    /// Left available (`MemAvailable`, or the room under the process's cgroup or own limit).
    pub available: u64,
    /// The host's memory, or the tighter limit of the process's control group or its own.
    pub total: u64,
    /// The floor the run was to leave free.
    pub floor: u64,
}

impl std::fmt::Display for Shortage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the memory this process may use is nearly exhausted ({:.2} GiB of {:.1} GiB \
             left available, {:.2} GiB kept free)",
            self.available as f64 / GIB,
            self.total as f64 / GIB,
            self.floor as f64 / GIB
        )
    }
}

impl Shortage {
    /// The error that stops a run of `ranks` ranks for this shortage; `at` says where the run
    /// had got to, if anything (" after N events ...").
    pub fn error(&self, ranks: u32, at: &str) -> Error {
        Error::NoMemory {
            what: format!(
                "{self}{at}: the run was stopped before the system kills it. {ranks} ranks and \
                 what their programs hold do not fit this host; try fewer ranks or smaller data \
                 per rank"
            ),
        }
    }
}

impl MemoryWatch {
    /// A watch that reports a shortage when less than `floor` bytes are left available
    /// (`None`: 1% of the host's memory, at least 128 MiB).
    pub fn new(floor: Option<u64>) -> Self {
        MemoryWatch {
            floor,
            last: None,
            wait: Duration::ZERO,
            off: false,
        }
    }

    /// Looks at the host clock and, once per period (at once on the first call), at the
    /// host's memory: `Some` when less than the floor is left.
    #[cold]
    #[inline(never)]
    pub fn poll(&mut self) -> Option<Shortage> {
        if self.off || self.last.is_some_and(|t| t.elapsed() < self.wait) {
            return None;
        }
        self.last = Some(Instant::now());
        let Some((available, total)) = host_memory() else {
            self.off = true;
            return None;
        };
        let floor = self.floor.unwrap_or_else(|| default_floor(total));
        self.wait = period(available, floor);
        (available < floor).then_some(Shortage {
            available,
            total,
            floor,
        })
    }

    /// [`MemoryWatch::poll`] in the simulator's run loop, every [`CHECK_EVERY`] events: the
    /// error to stop the run with, saying where it got to (`events`, virtual time `now`).
    #[cold]
    #[inline(never)]
    pub(crate) fn tick(&mut self, events: u64, now: u64, ranks: u32) -> Option<Error> {
        let shortage = self.poll()?;
        Some(shortage.error(
            ranks,
            &format!(" after {events} events at virtual time {now} ns"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{
        MemoryWatch, cgroup_limit, check_fits, default_floor, parse_meminfo, period, rlimit_limit,
    };
    use mpsim_proto::error::Error;

    #[test]
    fn meminfo_is_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   22469180 kB\n";
        assert_eq!(
            parse_meminfo(text),
            (Some(22_469_180 * 1024), Some(24_000_000 * 1024))
        );
        assert_eq!(parse_meminfo("MemTotal: 5 kB\n"), (None, Some(5 * 1024)));
        assert_eq!(parse_meminfo("MemAvailable: lots\n"), (None, None));
    }

    #[test]
    fn a_control_group_limit_leaves_room_for_its_file_cache() {
        let v2_stat = "anon 100\nfile 300\ninactive_file 200\nactive_file 100\n";
        assert_eq!(
            cgroup_limit("1000\n", "700\n", v2_stat, "inactive_file"),
            Some((500, 1000))
        );
        assert_eq!(cgroup_limit("max\n", "700", v2_stat, "inactive_file"), None);
        let v1_stat = "cache 5\ntotal_inactive_file 50\n";
        assert_eq!(
            cgroup_limit("9223372036854771712", "1", v1_stat, "total_inactive_file"),
            None,
            "v1's unlimited"
        );
        assert_eq!(
            cgroup_limit("100", "400", v1_stat, "total_inactive_file"),
            Some((0, 100)),
            "over the limit: no room"
        );
        assert_eq!(
            cgroup_limit("100", "40", "", "inactive_file"),
            Some((60, 100))
        );
    }

    #[test]
    fn process_limits_leave_room_under_the_tighter_one() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max data size             unlimited            unlimited            bytes
Max address space         1048576000           unlimited            bytes
";
        let status =
            "Name:\tring\nVmPeak:\t  300000 kB\nVmSize:\t  204800 kB\nVmData:\t  1000 kB\n";
        let room = 1_048_576_000 - 204_800 * 1024;
        assert_eq!(rlimit_limit(limits, status), Some((room, 1_048_576_000)));
        let both = limits.replace(
            "Max data size             unlimited",
            "Max data size             2048000  ",
        );
        assert_eq!(
            rlimit_limit(&both, status),
            Some((2_048_000 - 1_024_000, 2_048_000)),
            "the data limit leaves less room"
        );
        let none = limits.replace("1048576000", "unlimited ");
        assert_eq!(rlimit_limit(&none, status), None);
    }

    #[test]
    fn the_floor_is_a_hundredth_of_the_host_and_at_least_128_mib() {
        assert_eq!(default_floor(24 << 30), (24 << 30) / 100);
        assert_eq!(default_floor(1 << 30), 128 << 20);
    }

    /// The host is read again before the fastest growth could use up the room above the floor.
    #[test]
    fn the_watch_looks_more_often_close_to_the_floor() {
        const GIB: u64 = 1 << 30;
        assert_eq!(period(20 * GIB, GIB), Duration::from_secs(1));
        assert_eq!(period(2 * GIB, GIB), Duration::from_millis(125));
        assert_eq!(period(GIB, GIB), Duration::from_millis(10));
        assert_eq!(period(0, GIB), Duration::from_millis(10));
    }

    #[test]
    fn one_rank_fits_anywhere() {
        assert!(check_fits(1, 1024).is_ok());
    }

    /// A floor above all the host has trips at the first look (where the host tells its
    /// memory); a floor of nothing never does, and the watch reads the host once per period.
    #[test]
    fn the_watch_stops_a_run_below_its_floor_only() {
        if std::fs::read_to_string("/proc/meminfo").is_err() {
            return;
        }
        match MemoryWatch::new(Some(u64::MAX)).tick(640, 5_000, 3) {
            Some(Error::NoMemory { what }) => assert!(
                what.contains("after 640 events at virtual time 5000 ns")
                    && what.contains("3 ranks"),
                "{what}"
            ),
            other => panic!("expected NoMemory, got {other:?}"),
        }
        let mut relaxed = MemoryWatch::new(Some(0));
        assert!(relaxed.tick(64, 0, 1).is_none());
        assert!(relaxed.last.is_some(), "the first tick reads the host");
    }
}
