//! Source lines of a C program's calls, for the reports: each call carries the return address
//! of the program's call into the library (`CallHead::site`); when a report names the call, the
//! address is looked up in the program's executable: `file.c:LINE in function` from its debug
//! information (a `-g` build), `function+0xOFF` from its symbol table otherwise, nothing when
//! neither knows it (a stripped program, an address in another library).
//!
//! Nothing is looked up unless something is reported, and the executable is read once (the
//! first time). The text names the file as the compiler was given it (DWARF's name), never an
//! address, so the same run prints the same bytes wherever the program was loaded.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// The program's executable and where its ranks loaded it; every rank's current call site.
pub(crate) struct Sites {
    path: PathBuf,
    /// Run-time minus link-time addresses of the executable (`MPI_Init` says; the same in
    /// every rank: they are forked after the program is loaded).
    bias: AtomicU64,
    /// Each rank's call being executed (or its last one): its return address, 0 if unknown.
    current: Vec<AtomicU64>,
    /// The executable's debug information, read on first use (`None` inside: unreadable).
    loader: Mutex<Option<Option<addr2line::Loader>>>,
    /// The run's working directory: a file under it is named relative to it.
    cwd: Option<String>,
}

impl Sites {
    pub fn new(path: PathBuf, ranks: u32) -> Self {
        Sites {
            path,
            bias: AtomicU64::new(0),
            current: (0..ranks).map(|_| AtomicU64::new(0)).collect(),
            loader: Mutex::new(None),
            cwd: std::env::current_dir()
                .ok()
                .and_then(|d| d.to_str().map(|d| format!("{}/", d.trim_end_matches('/')))),
        }
    }

    /// Where the executable is loaded (from `MPI_Init`).
    pub fn set_bias(&self, bias: u64) {
        self.bias.store(bias, Ordering::Relaxed);
    }

    /// Rank `rank` is making the call from `site`.
    #[inline]
    pub fn set_current(&self, rank: u32, site: u64) {
        if let Some(c) = self.current.get(rank as usize) {
            c.store(site, Ordering::Relaxed);
        }
    }

    /// Rank `rank`'s current call's return address (0: not known).
    pub fn current(&self, rank: u32) -> u64 {
        self.current
            .get(rank as usize)
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// The run's error `e`, naming where the program made the calls it names: a deadlock's
    /// blocked ranks (`rank 0 blocked in recv from ring.c:42 in main since ...`), or the call
    /// of an error of one call, if the proxy did not name it already (the run may report the
    /// error as the core recorded it).
    pub fn name_calls(&self, e: &mut mpsim::Error) {
        if let mpsim::Error::Deadlock { report } = e {
            for b in &mut report.blocked {
                if let Some(w) = self.describe(self.current(b.rank)) {
                    // A deadlock ends the run: the leaked texts are made once.
                    b.call = Box::leak(format!("{} from {w}", b.call).into_boxed_str());
                }
            }
        } else if let Some(site) = e.site_mut()
            && !site.call.contains(" from ")
            && let Some(w) = self.describe(self.current(site.rank))
        {
            // As above: once.
            site.call = Box::leak(format!("{} from {w}", site.call).into_boxed_str());
        }
    }

    /// ` from FILE:LINE in FUNCTION` (or ` from FUNCTION+0xOFF`) for return address `site`,
    /// or nothing when not known.
    pub fn from(&self, site: u64) -> String {
        self.describe(site)
            .map(|w| format!(" from {w}"))
            .unwrap_or_default()
    }

    /// `FILE:LINE in FUNCTION`, or `FUNCTION+0xOFF`, for return address `site`.
    pub fn describe(&self, site: u64) -> Option<String> {
        if site == 0 {
            return None;
        }
        // The call instruction ends at the return address: look up its last byte.
        let probe = site
            .wrapping_sub(self.bias.load(Ordering::Relaxed))
            .checked_sub(1)?;
        let mut held = self.loader.lock().unwrap_or_else(|p| p.into_inner());
        let loader = held
            .get_or_insert_with(|| addr2line::Loader::new(&self.path).ok())
            .as_ref()?;
        // An address outside the executable's code (a call from another library) is not
        // looked up: the symbol table would name whatever symbol precedes it.
        let text = loader.get_section_range(b".text")?;
        if !(text.begin..text.end).contains(&probe) {
            return None;
        }
        let symbol = loader.find_symbol_info(probe);
        let function = loader
            .find_frames(probe)
            .ok()
            .and_then(|mut frames| {
                // The innermost frame is the call's own (an inlined function's, if inlined).
                frames.next().ok().flatten()
            })
            .and_then(|f| f.function)
            .and_then(|n| n.raw_name().ok().map(|s| s.into_owned()))
            .or_else(|| symbol.as_ref().map(|s| s.name().to_string()));
        if let Ok(Some(loc)) = loader.find_location(probe)
            && let (Some(file), Some(line)) = (loc.file, loc.line)
            && line > 0
        {
            let file = self
                .cwd
                .as_deref()
                .and_then(|cwd| file.strip_prefix(cwd))
                .unwrap_or(file);
            return Some(match function {
                Some(f) => format!("{file}:{line} in {f}"),
                None => format!("{file}:{line}"),
            });
        }
        let s = symbol?;
        Some(format!(
            "{}+{:#x}",
            s.name(),
            (probe + 1).wrapping_sub(s.address())
        ))
    }
}
