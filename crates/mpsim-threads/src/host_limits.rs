//! Whether the host can start a thread per rank, checked before any thread starts.
//!
//! Most of the host's limits on threads show up as a failed spawn, which the run reports as an
//! error (`run.rs`). One does not: a Linux process may hold at most `vm.max_map_count` memory
//! mappings, and every thread adds four (its stack and the signal stack the Rust runtime gives
//! it, each with a guard page). A thread that gets its stack but not its signal stack aborts
//! the whole process from inside the runtime, before any code of ours runs on it: on a host
//! with the usual limit of 65,530 a run of 100,000 ranks died that way at its 32,516th thread.
//! So the run checks the limit first and, when the ranks cannot fit, ends with an error that
//! says how many can.

use mpsim_proto::error::Error;

/// Memory mappings a rank's thread adds: its stack and its signal stack, each with a guard
/// page (measured: 1,000 threads add 4,030 mappings).
const MAPS_PER_THREAD: u64 = 4;

/// Mappings left for what the run maps while its threads run (allocator arenas, large
/// message buffers, a trace).
const MAPS_SPARE: u64 = 4_096;

/// The most rank threads a process may start when it may hold `max_map_count` mappings and
/// holds `maps_now`.
fn max_threads(max_map_count: u64, maps_now: u64) -> u64 {
    max_map_count
        .saturating_sub(maps_now)
        .saturating_sub(MAPS_SPARE)
        / MAPS_PER_THREAD
}

/// `Ok` when `ranks` threads fit in the process's mapping limit, or when the host does not
/// say what its limit is (no `/proc`); otherwise the error that ends the run before it starts.
pub(crate) fn check_threads(ranks: u32) -> Result<(), Error> {
    let limit = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    let maps_now = std::fs::read_to_string("/proc/self/maps")
        .ok()
        .map(|s| s.lines().count() as u64);
    let (Some(limit), Some(maps_now)) = (limit, maps_now) else {
        return Ok(());
    };
    check(ranks, limit, maps_now)
}

/// [`check_threads`] with the host's figures given.
fn check(ranks: u32, max_map_count: u64, maps_now: u64) -> Result<(), Error> {
    let most = max_threads(max_map_count, maps_now);
    if u64::from(ranks) <= most {
        return Ok(());
    }
    Err(Error::NoMemory {
        what: format!(
            "{ranks} ranks on the threads backend need {} memory mappings (a thread per rank, \
             each with a stack and a signal stack and their guard pages), more than this \
             process may hold (vm.max_map_count = {max_map_count}, {maps_now} in use): at \
             most {most} ranks here; simulate more with --backend sim, or raise \
             vm.max_map_count",
            u64::from(ranks) * MAPS_PER_THREAD
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_within_the_mapping_limit_pass() {
        // 65,530 - 100 in use - 4,096 spare = 61,334 mappings: 15,333 threads.
        assert_eq!(max_threads(65_530, 100), 15_333);
        assert!(check(15_333, 65_530, 100).is_ok());
        assert!(check(1, 65_530, 100).is_ok());
    }

    #[test]
    fn too_many_ranks_for_the_mapping_limit_is_an_error_saying_how_many_fit() {
        let err = check(100_000, 65_530, 100).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::NoMemory { .. }), "{text}");
        assert!(text.contains("100000 ranks"), "{text}");
        assert!(text.contains("400000 memory mappings"), "{text}");
        assert!(text.contains("vm.max_map_count = 65530"), "{text}");
        assert!(text.contains("at most 15333 ranks"), "{text}");
    }

    #[test]
    fn a_process_already_at_its_limit_fits_no_thread() {
        assert_eq!(max_threads(65_530, 65_530), 0);
        assert_eq!(max_threads(1_000, 2_000), 0);
        assert!(check(1, 1_000, 2_000).is_err());
    }
}
