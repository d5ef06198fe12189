//! The mpi backend (`--backend mpi`, the `mpi` feature) under `mpirun -np 4 --oversubscribe`:
//! the same programs give the same results as under `sim`, and the errors mpsim reports
//! elsewhere are reported here too (truncation, bsend overflow), naming the rank and the call.
//!
//! A test harness of its own (`harness = false`): run by `cargo test`, this binary starts itself
//! under `mpirun` once per case (`MPSIM_MPI_CASE` names it); each process is then one rank. A
//! case that compares with `sim` first simulates the same program in the process (4 ranks,
//! each rank's results kept by rank), then runs it on MPI and checks its own rank's results
//! against the simulated ones. Cases that expect an error check `mpirun`'s exit status and the
//! error's text on standard error.

#[allow(dead_code, unused_imports)]
#[path = "p2p_stress.rs"]
mod stress;

use std::collections::BTreeMap;
use std::future::Future;
use std::process::{Command, ExitCode};
use std::sync::{Arc, Mutex};

use mpsim::{
    AlgorithmChoices, BSEND_OVERHEAD, Backend, Comm, Launcher, Op, PROC_NULL, Result, RunConfig,
    SendMode, Source, Tag, wait_all,
};

const RANKS: u32 = 4;

/// The ranks of a [`BIG_CASES`] case.
const BIG_RANKS: u32 = 2;

/// Each rank's results, by rank (all of them under sim; this process's one under mpi).
type Digests = Arc<Mutex<BTreeMap<u32, Vec<u64>>>>;

fn main() -> ExitCode {
    match std::env::var("MPSIM_MPI_CASE") {
        Ok(case) => rank_main(&case),
        Err(_) => harness(),
    }
}

/// The cases: name, and the text standard error must hold if the case is to fail (`None`: it
/// must succeed).
const CASES: &[(&str, Option<&str>)] = &[
    ("mpi_p2p_same_results_as_sim", None),
    ("mpi_collectives_same_results_as_sim", None),
    ("mpi_collectives_native_report_names_the_library", None),
    ("mpi_vector_collectives_same_results_as_sim", None),
    ("mpi_collectives_reproducible_same_bits_as_sim", None),
    ("mpi_p2p_stress_4_ranks_every_mode_and_wildcard", None),
    (
        "mpi_truncate_names_rank_call_and_sizes",
        Some(
            "rank 1 in recv (peer 0, tag 5, context 0): message of 64 bytes truncated to a buffer of 16 bytes",
        ),
    ),
    (
        "mpi_truncate_on_a_dup_names_rank_call_and_sizes",
        Some("message of 64 bytes truncated to a buffer of 16 bytes"),
    ),
    (
        "mpi_bsend_overflow_names_rank_call_and_sizes",
        Some(
            "rank 2 in bsend (peer 3, tag 1, context 0): bsend buffer overflow: 1088 bytes requested",
        ),
    ),
    (
        "mpi_deadlock_mutual_recv_names_both_ranks_and_the_cycle",
        Some(
            "mpsim: deadlock: rank 0 blocked in recv (peer 1, tag 0, context 0); rank 1 blocked \
             in recv (peer 0, tag 0, context 0); cycle 0 → 1 → 0\n",
        ),
    ),
    (
        "mpi_deadlock_recv_nobody_sends_while_a_message_sits_unreceived",
        Some("mpsim: deadlock: rank 3 blocked in recv (peer ANY_SOURCE, tag 9, context 0)\n"),
    ),
    (
        "mpi_deadlock_wait_on_a_rank_that_finished_says_so",
        Some(
            "mpsim: deadlock: rank 2 blocked in recv (peer 1, tag 4, context 0), and rank 1 has \
             finished\n",
        ),
    ),
    (
        "mpi_deadlock_head_to_head_ssend_on_a_dup",
        Some("blocked in ssend (peer 0, tag 3, context "),
    ),
    (
        "mpi_deadlock_head_to_head_ssend_on_the_world",
        Some(
            "mpsim: deadlock: rank 0 blocked in ssend (peer 1, tag 3, context 0); rank 1 blocked \
             in ssend (peer 0, tag 3, context 0); cycle 0 → 1 → 0\n",
        ),
    ),
    ("mpi_deadlock_none_while_a_rank_computes_long", None),
    ("mpi_blocking_recv_of_messages_already_there", None),
    ("mpi_report_and_trace_merged_by_rank_0", None),
    (
        "mpi_ranks_that_disagree_with_mpirun_are_an_error",
        Some("the run asks for 3 ranks (--ranks), but mpirun started 4 processes"),
    ),
];

/// Cases too big for every run (`#[ignore]` in spirit): run only when named, on 2 processes.
/// `mpi_p2p_over_2_gib_every_mode_probe_and_mrecv` needs up to 6.3 GB per rank (13 GB in
/// all) and 3 minutes here (2 cores, 2026-11-29):
/// `cargo test --release -p mpsim --features mpi --test mpi_backend -- mpi_p2p_over_2_gib`.
const BIG_CASES: &[&str] = &["mpi_p2p_over_2_gib_every_mode_probe_and_mrecv"];

/// Runs every case under `mpirun` and says which passed.
fn harness() -> ExitCode {
    let exe = std::env::current_exe().expect("the test's own path");
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut failed = 0;
    let out_dir = std::env::temp_dir().join(format!("mpsim-mpi-backend-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("a directory for the cases' files");
    let big = BIG_CASES
        .iter()
        .filter(|case| filter.iter().any(|f| case.contains(f.as_str())))
        .map(|&case| (case, None, BIG_RANKS));
    let cases = CASES.iter().map(|&(case, error)| (case, error, RANKS));
    for (case, expect_error, ranks) in cases.chain(big) {
        if !filter.is_empty() && !filter.iter().any(|f| case.contains(f.as_str())) {
            continue;
        }
        let mut cmd = Command::new("mpirun");
        cmd.args(["-np", &ranks.to_string(), "--oversubscribe"])
            .env("MPSIM_MPI_CASE", case)
            .env("MPSIM_MPI_OUT", &out_dir)
            .arg(&exe);
        // Open MPI refuses root unless told (a CI container runs as root).
        if nix_is_root() {
            cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        }
        let out = match cmd.output() {
            Ok(out) => out,
            Err(e) => {
                println!("test {case} ... FAILED (mpirun: {e}; scripts/install-deps installs it)");
                failed += 1;
                continue;
            }
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let ok = match expect_error {
            None => out.status.success() && stdout.matches("rank ok").count() == ranks as usize,
            Some(text) => !out.status.success() && stderr.contains(text),
        };
        if ok {
            println!("test {case} ... ok");
        } else {
            failed += 1;
            println!(
                "test {case} ... FAILED ({})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
                out.status
            );
        }
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        println!("{failed} mpi case(s) failed");
        ExitCode::FAILURE
    }
}

fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .is_some_and(|l| l.split_whitespace().nth(1) == Some("0"))
    })
}

/// One rank of `case`, under mpirun.
fn rank_main(case: &str) -> ExitCode {
    let mpi = Launcher::new(RANKS).backend(Backend::Mpi);
    let result = match case {
        "mpi_p2p_same_results_as_sim" => same_as_sim(p2p_program),
        "mpi_collectives_same_results_as_sim" => same_as_sim(coll_program),
        "mpi_collectives_native_report_names_the_library" => native_report_case(),
        "mpi_vector_collectives_same_results_as_sim" => same_as_sim(vector_program),
        "mpi_collectives_reproducible_same_bits_as_sim" => {
            same_as_sim_with(reproducible(), repro_program)
        }
        "mpi_p2p_stress_4_ranks_every_mode_and_wildcard" => stress_case(),
        "mpi_truncate_names_rank_call_and_sizes" => {
            mpi.run(|world: Comm| async move { truncate_on(&world).await })
        }
        "mpi_truncate_on_a_dup_names_rank_call_and_sizes" => mpi.run(|world: Comm| async move {
            let dup = world.dup()?;
            truncate_on(&dup).await
        }),
        "mpi_bsend_overflow_names_rank_call_and_sizes" => mpi.run(|world: Comm| async move {
            if world.rank() == 2 {
                world.buffer_attach(1024)?;
                world.bsend(&[0u8; 1024], 3, 1).await?;
            }
            world.barrier().await
        }),
        "mpi_deadlock_mutual_recv_names_both_ranks_and_the_cycle" => {
            mpi.run(|world: Comm| async move {
                let mut got = [0u8];
                if world.rank() < 2 {
                    world.recv(&mut got, 1 - world.rank(), 0).await?;
                }
                Ok(())
            })
        }
        "mpi_deadlock_recv_nobody_sends_while_a_message_sits_unreceived" => {
            mpi.run(|world: Comm| async move {
                let mut got = [0u8];
                match world.rank() {
                    0 => world.send(&[1u8], 3, 1).await.map(drop)?,
                    3 => world.recv(&mut got, Source::Any, 9).await.map(drop)?,
                    _ => {}
                }
                Ok(())
            })
        }
        "mpi_deadlock_wait_on_a_rank_that_finished_says_so" => mpi.run(|world: Comm| async move {
            let mut got = [0u8];
            if world.rank() == 2 {
                world.recv(&mut got, 1, 4).await?;
            }
            Ok(())
        }),
        "mpi_deadlock_head_to_head_ssend_on_a_dup" => mpi.run(|world: Comm| async move {
            let dup = world.dup()?;
            if dup.rank() < 2 {
                dup.ssend(&[1u8; 8], 1 - dup.rank(), 3).await?;
            }
            Ok(())
        }),
        "mpi_deadlock_head_to_head_ssend_on_the_world" => mpi.run(|world: Comm| async move {
            if world.rank() < 2 {
                world.ssend(&[1u8; 8], 1 - world.rank(), 3).await?;
            }
            Ok(())
        }),
        "mpi_report_and_trace_merged_by_rank_0" => report_and_trace_case(),
        "mpi_p2p_over_2_gib_every_mode_probe_and_mrecv" => over_2_gib_case(),
        // Ranks 1..3 wait far longer than the watchdog's first rounds for rank 0, which only
        // computes (no MPI call), then sends: no deadlock is declared.
        "mpi_deadlock_none_while_a_rank_computes_long" => mpi.run(|world: Comm| async move {
            let mut got = [0u8; 4];
            if world.rank() == 0 {
                std::thread::sleep(std::time::Duration::from_millis(400));
                for to in 1..RANKS {
                    world.send(&[to as u8; 4], to, 2).await?;
                }
            } else {
                world.recv(&mut got, 0, 2).await?;
                assert_eq!(got, [world.rank() as u8; 4]);
            }
            world.barrier().await
        }),
        "mpi_blocking_recv_of_messages_already_there" => mpi.run(|world: Comm| async move {
            let dup = world.dup()?;
            arrived_first(&world).await?;
            arrived_first(&dup).await?;
            world.barrier().await
        }),
        "mpi_ranks_that_disagree_with_mpirun_are_an_error" => Launcher::with_config(RunConfig {
            backend: Backend::Mpi,
            ..RunConfig::new(3)
        })
        .run(|_world: Comm| async move { Ok(()) }),
        other => panic!("no case {other}"),
    };
    match result {
        Ok(()) => {
            println!("rank ok");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mpsim: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Sizes around the backend's small buffers (32 bytes with the header), the payload's inline
/// 16 bytes and the library's eager limit.
const ARRIVED_SIZES: [usize; 10] = [0, 1, 8, 16, 17, 20, 32, 33, 1000, 70_000];

/// Rank 0 sends a message of each of `ARRIVED_SIZES` (tag = its index, bytes from the size and
/// the index) to rank 1 on `comm`, which receives them after a nap (so that they are there:
/// a blocking receive that completes in its start), in reverse order, into buffers larger than
/// the messages, and checks each one's bytes and status.
async fn arrived_first(comm: &Comm) -> Result<()> {
    let bytes = |i: usize, n: usize| -> Vec<u8> { (0..n).map(|k| (k * 7 + i + n) as u8).collect() };
    match comm.rank() {
        0 => {
            for (i, &n) in ARRIVED_SIZES.iter().enumerate() {
                comm.send(&bytes(i, n), 1, i as i32).await?;
            }
        }
        1 => {
            std::thread::sleep(std::time::Duration::from_millis(200));
            for (i, &n) in ARRIVED_SIZES.iter().enumerate().rev() {
                let mut got = vec![0xAAu8; n + 5];
                let status = comm.recv(&mut got, 0, i as i32).await?;
                assert_eq!((status.source, status.tag, status.bytes), (0, i as i32, n));
                assert_eq!(got[..n], bytes(i, n), "message {i} of {n} bytes");
                assert!(got[n..].iter().all(|&b| b == 0xAA), "past message {i}");
            }
        }
        _ => {}
    }
    Ok(())
}

/// Rank 0 sends 64 bytes with tag 5 to rank 1, which receives into 16 on `comm`.
async fn truncate_on(comm: &Comm) -> Result<()> {
    match comm.rank() {
        0 => comm.send(&[7u8; 64], 1, 5).await.map(drop)?,
        1 => comm.recv(&mut [0u8; 16], 0, 5).await.map(drop)?,
        _ => {}
    }
    comm.barrier().await
}

/// Runs `program` under sim (every rank in this process) and then on MPI (this process's
/// rank), and checks this rank's results against the simulated ones.
fn same_as_sim<F, Fut>(program: F) -> Result<()>
where
    F: Fn(Comm, Digests) -> Fut + Sync + Copy,
    Fut: Future<Output = Result<()>>,
{
    same_as_sim_with(AlgorithmChoices::default(), program)
}

/// `--reproducible`.
fn reproducible() -> AlgorithmChoices {
    let mut choices = AlgorithmChoices::default();
    choices.reproducible = true;
    choices
}

/// [`same_as_sim`], both runs naming the collectives' algorithms `choices`.
fn same_as_sim_with<F, Fut>(choices: AlgorithmChoices, program: F) -> Result<()>
where
    F: Fn(Comm, Digests) -> Fut + Sync + Copy,
    Fut: Future<Output = Result<()>>,
{
    let simulated: Digests = Arc::default();
    let sim = Launcher::new(RANKS)
        .collectives(choices)
        .simulate(|world| program(world, Arc::clone(&simulated)));
    if let Some(e) = sim.error {
        return Err(e);
    }
    let real: Digests = Arc::default();
    Launcher::new(RANKS)
        .backend(Backend::Mpi)
        .collectives(choices)
        .run(|world| program(world, Arc::clone(&real)))?;
    let real = real.lock().expect("not poisoned");
    let simulated = simulated.lock().expect("not poisoned");
    let (&rank, got) = real.iter().next().expect("this rank's results");
    let want = &simulated[&rank];
    if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
        panic!(
            "rank {rank}: mpi and sim disagree from value {i} on: mpi {:?}, sim {:?}",
            &got[i.min(got.len())..(i + 8).min(got.len())],
            &want[i.min(want.len())..(i + 8).min(want.len())]
        );
    }
    assert!(!got.is_empty());
    Ok(())
}

fn keep(out: &Digests, world: &Comm, values: Vec<u64>) {
    out.lock()
        .expect("not poisoned")
        .entry(world.rank())
        .or_default()
        .extend(values);
}

/// Point-to-point in every mode, on the world and on communicators made by dup and split, with
/// wildcards, probes, matched probes, persistent requests and cancel; each rank keeps what it
/// received.
async fn p2p_program(world: Comm, out: Digests) -> Result<()> {
    let me = world.rank();
    let dup = world.dup()?;
    let half = world
        .split(Some(me % 2), -i64::from(me))
        .await?
        .expect("a color");
    for comm in [&world, &dup, &half] {
        let (cme, cn) = (comm.rank(), comm.size());
        let (cr, cl) = ((cme + 1) % cn, (cme + cn - 1) % cn);
        let mut got = Vec::new();
        // Every mode, nonblocking, around the ring: receives first, so rsend is valid.
        let mut bufs = [[0u64; 3]; 4];
        let mut reqs = Vec::new();
        for (i, b) in bufs.iter_mut().enumerate() {
            reqs.push(comm.irecv(b, cl, i as i32)?);
        }
        comm.barrier().await?;
        comm.buffer_attach(4 * (24 + BSEND_OVERHEAD))?;
        for (i, mode) in SendMode::ALL.into_iter().enumerate() {
            let data = [u64::from(cme), i as u64, 1000 + u64::from(me)];
            reqs.push(comm.start_send(mode, &data, cr, i as i32)?);
        }
        wait_all(&mut reqs).await?;
        drop(reqs);
        comm.buffer_detach().await?;
        got.extend(bufs.iter().flatten());
        // Blocking modes, paired by sendrecv-like order: even ranks send first.
        for mode in [SendMode::Standard, SendMode::Synchronous] {
            let mut b = [0u32; 2];
            let data = [cme, 77];
            if cme % 2 == 0 {
                send_mode(comm, mode, &data, cr, 9).await?;
                comm.recv(&mut b, cl, 9).await?;
            } else {
                comm.recv(&mut b, cl, 9).await?;
                send_mode(comm, mode, &data, cr, 9).await?;
            }
            got.extend(b.iter().map(|&x| u64::from(x)));
        }
        // Wildcards: from the left with any tag, then from any source with a tag.
        let mut b = [0u8; 8];
        comm.send(&[cme as u8; 8], cr, 42).await?;
        let s = comm.recv(&mut b, cl, Tag::Any).await?;
        got.extend([
            u64::from(s.source),
            s.tag as u64,
            s.bytes as u64,
            u64::from(b[0]),
        ]);
        comm.send(&[cme as u8 + 1; 5], cr, 43).await?;
        let s = comm.recv(&mut b, Source::Any, 43).await?;
        got.extend([
            u64::from(s.source),
            s.tag as u64,
            s.bytes as u64,
            u64::from(b[0]),
        ]);
        // Probe, then receive; matched probe, then mrecv.
        comm.send(&[1u16, 2, 3], cr, 50).await?;
        let s = comm.probe(cl, 50).await?;
        got.extend([u64::from(s.source), s.bytes as u64]);
        let mut p = [0u16; 3];
        comm.recv(&mut p, cl, 50).await?;
        got.extend(p.iter().map(|&x| u64::from(x)));
        comm.send(&[9u32; 7], cr, 51).await?;
        let m = comm.mprobe(Source::Any, Tag::Any).await?;
        let st = m.status();
        got.extend([u64::from(st.source), st.tag as u64, st.bytes as u64]);
        let mut q = [0u32; 7];
        m.mrecv(&mut q).await?;
        got.extend(q.iter().map(|&x| u64::from(x)));
        // Nothing else is there (between barriers: no rank is ahead).
        comm.barrier().await?;
        got.push(u64::from(
            comm.iprobe(Source::Any, Tag::Any).await?.is_some(),
        ));
        comm.barrier().await?;
        // Persistent requests, three rounds.
        let mut sbuf = [0u64; 2];
        let mut rbuf = [0u64; 2];
        {
            let mut rq = comm.recv_init(&mut rbuf, cl, 60)?;
            for round in 0..3u64 {
                rq.start()?;
                {
                    let mut sq = comm.send_init(&mut sbuf, cr, 60)?;
                    let b = sq.buffer_mut::<u64>().expect("u64s");
                    b[0] = round;
                    b[1] = u64::from(cme);
                    sq.start()?;
                    sq.wait().await?;
                }
                rq.wait().await?;
                got.extend(rq.buffer::<u64>().expect("u64s").iter().copied());
            }
        }
        // A receive cancelled before any message: its status says so.
        let mut c = [0u8; 4];
        let mut r = comm.irecv(&mut c, cl, 99)?;
        r.cancel()?;
        let s = r.wait().await?;
        got.push(u64::from(s.cancelled));
        // PROC_NULL.
        let s = comm.recv(&mut c, PROC_NULL, 1).await?;
        got.push(u64::from(s.source == PROC_NULL));
        comm.barrier().await?;
        keep(&out, &world, got);
    }
    Ok(())
}

async fn send_mode(comm: &Comm, mode: SendMode, data: &[u32], to: u32, tag: i32) -> Result<()> {
    match mode {
        SendMode::Synchronous => comm.ssend(data, to, tag).await,
        _ => comm.send(data, to, tag).await,
    }
}

/// Every collective on the world and on a split, integer data (exact whatever the algorithm),
/// plus a reproducible floating-point allreduce and a nonblocking one.
async fn coll_program(world: Comm, out: Digests) -> Result<()> {
    let me = world.rank();
    let half = world.split(Some(me / 2), 0).await?.expect("a color");
    for comm in [&world, &half] {
        let (r, n) = (comm.rank(), comm.size() as usize);
        let mut got = Vec::new();
        comm.barrier().await?;
        for root in 0..comm.size() {
            let mut b = [u64::from(r) * 10 + u64::from(root); 5];
            comm.bcast(&mut b, root).await?;
            got.extend(b);
            let mut red = [0u64; 3];
            comm.reduce(&[u64::from(r) + 1; 3], &mut red, &Op::sum(), root)
                .await?;
            got.extend(red);
            let mut g = vec![0u32; if r == root { 2 * n } else { 0 }];
            comm.gather(&[r, r * r], &mut g, root).await?;
            got.extend(g.iter().map(|&x| u64::from(x)));
        }
        let mut all = [0i64; 4];
        comm.allreduce(&[i64::from(r) - 2; 4], &mut all, &Op::max())
            .await?;
        got.extend(all.iter().map(|&x| x as u64));
        let mut big = vec![0u64; 20_000];
        let mine: Vec<u64> = (0..20_000).map(|i| i * u64::from(r + 1)).collect();
        comm.allreduce(&mine, &mut big, &Op::sum()).await?;
        got.push(
            big.iter()
                .fold(0u64, |a, &x| a.wrapping_mul(31).wrapping_add(x)),
        );
        let mut ag = vec![0u16; n];
        comm.allgather(&[r as u16 + 3], &mut ag).await?;
        got.extend(ag.iter().map(|&x| u64::from(x)));
        let send: Vec<u32> = (0..n as u32).map(|d| r * 100 + d).collect();
        let mut a2a = vec![0u32; n];
        comm.alltoall(&send, &mut a2a).await?;
        got.extend(a2a.iter().map(|&x| u64::from(x)));
        let mut sc = [0u64; 2];
        comm.scan(&[u64::from(r) + 1, 2], &mut sc, &Op::sum())
            .await?;
        got.extend(sc);
        let mut rs = [0u64; 1];
        let contrib: Vec<u64> = (0..n as u64).map(|i| i + u64::from(r)).collect();
        comm.reduce_scatter_block(&contrib, &mut rs, &Op::sum())
            .await?;
        got.extend(rs);
        let mut nb = [0u64; 2];
        let req = comm.iallreduce(&[u64::from(r), 1], &mut nb, &Op::sum())?;
        req.wait().await?;
        got.extend(nb);
        // Every other collective MPI runs natively, blocking and nonblocking, several
        // element types and operations; and some it does not (a user operation, minloc).
        let root = comm.size() - 1;
        let blocks: Vec<i16> = (0..n as i16).map(|i| i * 7 - r as i16).collect();
        let mut sc = [0i16; 1];
        comm.scatter(&blocks, &mut sc, root).await?;
        got.push(sc[0] as u64);
        let mut ex = [0u32; 2];
        comm.exscan(&[r + 1, 1 << r], &mut ex, &Op::bor()).await?;
        if r > 0 {
            got.extend(ex.iter().map(|&x| u64::from(x)));
        }
        for (op, name) in [
            (Op::<i32>::prod(), 1),
            (Op::min(), 2),
            (Op::band(), 3),
            (Op::lxor(), 4),
        ] {
            let mut x = [0i32; 2];
            comm.allreduce(&[r as i32 + name, -(r as i32)], &mut x, &op)
                .await?;
            got.extend(x.iter().map(|&v| v as u64));
        }
        let mut fl = [0f32; 3];
        comm.allreduce(&[r as f32, 0.5, -1.0], &mut fl, &Op::max())
            .await?;
        got.extend(fl.iter().map(|&v| u64::from(v.to_bits())));
        let mut concat = [0u64];
        let user = Op::user(|a: &[u64], b: &mut [u64]| b[0] += a[0] * 10, false);
        comm.allreduce(&[u64::from(r) + 1], &mut concat, &user)
            .await?;
        got.extend(concat);
        let mut bc = [if r == 0 { 99u8 } else { 0 }; 3];
        let mut ig = vec![0u64; n];
        let mut iag = vec![0u32; n];
        let mut ia2a = vec![0u8; n];
        let a2a_send: Vec<u8> = (0..n as u8).map(|d| r as u8 * 16 + d).collect();
        let mut ired = [0u64];
        let mut iscan = [0i64];
        let mut iscat = [0u16];
        let iscat_send: Vec<u16> = (0..n as u16).map(|i| i + 1000).collect();
        let mut reqs = vec![
            comm.ibarrier()?,
            comm.ibcast(&mut bc, 0)?,
            comm.igather(&[u64::from(r) * 3], &mut ig, 1 % comm.size())?,
            comm.iallgather(&[r + 40], &mut iag)?,
            comm.ialltoall(&a2a_send, &mut ia2a)?,
            comm.ireduce(&[u64::from(r) + 5], &mut ired, &Op::sum(), 0)?,
            comm.iscan(&[i64::from(r) - 1], &mut iscan, &Op::sum())?,
            comm.iscatter(&iscat_send, &mut iscat, 0)?,
        ];
        wait_all(&mut reqs).await?;
        drop(reqs);
        got.extend(bc.iter().map(|&x| u64::from(x)));
        if r == 1 % comm.size() {
            got.extend(ig.iter().copied());
        }
        got.extend(iag.iter().map(|&x| u64::from(x)));
        got.extend(ia2a.iter().map(|&x| u64::from(x)));
        if r == 0 {
            got.extend(ired);
        }
        got.push(iscan[0] as u64);
        got.push(u64::from(iscat[0]));
        keep(&out, &world, got);
    }
    Ok(())
}

/// The vector collectives (`gatherv`, `scatterv`, `allgatherv`, `alltoallv`) and
/// `reduce_scatter(_block)`, blocking and nonblocking, on the world and on a split, with
/// uneven counts (some zero) and several element types: MPI's own (`MPI_Igatherv` and kin)
/// on mpi, mpsim's algorithms under sim; each rank keeps what it got.
async fn vector_program(world: Comm, out: Digests) -> Result<()> {
    let me = world.rank();
    let half = world.split(Some(me / 2), 0).await?.expect("a color");
    for comm in [&world, &half] {
        let (r, n) = (comm.rank() as usize, comm.size() as usize);
        let mut got = Vec::new();
        // Rank i has i + 1 elements, but rank 1 has none.
        let counts: Vec<usize> = (0..n).map(|i| if i == 1 { 0 } else { i + 1 }).collect();
        let total: usize = counts.iter().sum();
        let mine: Vec<u32> = (0..counts[r]).map(|k| (r * 100 + k) as u32).collect();
        for root in 0..comm.size() {
            let at_root = comm.rank() == root;
            let mut all = vec![0u32; if at_root { total } else { 0 }];
            let cs: &[usize] = if at_root { &counts } else { &[] };
            comm.gatherv(&mine, &mut all, cs, root).await?;
            got.extend(all.iter().map(|&x| u64::from(x)));
            let src: Vec<i64> = if at_root {
                (0..total as i64).map(|k| k * 3 - 7).collect()
            } else {
                Vec::new()
            };
            let mut part = vec![0i64; counts[r]];
            comm.scatterv(&src, cs, &mut part, root).await?;
            got.extend(part.iter().map(|&x| x as u64));
        }
        let mut ag = vec![0u32; total];
        comm.allgatherv(&mine, &mut ag, &counts).await?;
        got.extend(ag.iter().map(|&x| u64::from(x)));
        // Rank r sends (r + j) % 3 bytes to rank j.
        let send_counts: Vec<usize> = (0..n).map(|j| (r + j) % 3).collect();
        let recv_counts: Vec<usize> = (0..n).map(|i| (i + r) % 3).collect();
        let a2a: Vec<u8> = (0..send_counts.iter().sum::<usize>())
            .map(|k| (r * 16 + k) as u8)
            .collect();
        let mut a2a_in = vec![0u8; recv_counts.iter().sum()];
        comm.alltoallv(&a2a, &send_counts, &mut a2a_in, &recv_counts)
            .await?;
        got.extend(a2a_in.iter().map(|&x| u64::from(x)));
        let contrib: Vec<u64> = (0..total as u64).map(|k| k * (r as u64 + 1)).collect();
        let mut rs = vec![0u64; counts[r]];
        comm.reduce_scatter(&contrib, &mut rs, &counts, &Op::sum())
            .await?;
        got.extend(rs.iter().copied());
        let mut rsb = [0i32; 2];
        let block: Vec<i32> = (0..2 * n as i32).map(|k| k - r as i32).collect();
        comm.reduce_scatter_block(&block, &mut rsb, &Op::min())
            .await?;
        got.extend(rsb.iter().map(|&x| x as u64));
        // The nonblocking forms, all in flight at once.
        let root = comm.size() - 1;
        let at_root = comm.rank() == root;
        let cs: &[usize] = if at_root { &counts } else { &[] };
        let mut ig = vec![0u32; if at_root { total } else { 0 }];
        let src: Vec<u16> = if at_root {
            (0..total as u16).map(|k| k + 500).collect()
        } else {
            Vec::new()
        };
        let mut isc = vec![0u16; counts[r]];
        let mut iag = vec![0u32; total];
        let mut ia2a = vec![0u8; recv_counts.iter().sum()];
        let mut irs = vec![0u64; counts[r]];
        let mut irsb = [0i32; 2];
        let mut reqs = vec![
            comm.igatherv(&mine, &mut ig, cs, root)?,
            comm.iscatterv(&src, cs, &mut isc, root)?,
            comm.iallgatherv(&mine, &mut iag, &counts)?,
            comm.ialltoallv(&a2a, &send_counts, &mut ia2a, &recv_counts)?,
            comm.ireduce_scatter(&contrib, &mut irs, &counts, &Op::max())?,
            comm.ireduce_scatter_block(&block, &mut irsb, &Op::sum())?,
        ];
        wait_all(&mut reqs).await?;
        drop(reqs);
        got.extend(ig.iter().map(|&x| u64::from(x)));
        got.extend(isc.iter().map(|&x| u64::from(x)));
        got.extend(iag.iter().map(|&x| u64::from(x)));
        got.extend(ia2a.iter().map(|&x| u64::from(x)));
        got.extend(irs.iter().copied());
        got.extend(irsb.iter().map(|&x| x as u64));
        keep(&out, &world, got);
    }
    Ok(())
}

/// Floating-point reductions under `--reproducible`: the same bits as the simulator's, on the
/// world and on a split (mpsim's algorithms over MPI point-to-point).
async fn repro_program(world: Comm, out: Digests) -> Result<()> {
    let me = world.rank();
    let half = world.split(Some(me % 2), 0).await?.expect("a color");
    for comm in [&world, &half] {
        let r = f64::from(comm.rank());
        let mine: Vec<f64> = (0..1000)
            .map(|i| (r + 1.0) * 0.1 + f64::from(i) * 1e-3)
            .collect();
        let mut sum = vec![0f64; 1000];
        comm.allreduce(&mine, &mut sum, &Op::sum()).await?;
        let mut red = vec![0f64; 1000];
        comm.reduce(&mine, &mut red, &Op::sum(), 0).await?;
        let mut rs = vec![0f64; 1000 / comm.size() as usize];
        comm.reduce_scatter_block(
            &mine[..rs.len() * comm.size() as usize],
            &mut rs,
            &Op::sum(),
        )
        .await?;
        let mut bits: Vec<u64> = sum.iter().chain(&rs).map(|x| x.to_bits()).collect();
        if comm.rank() == 0 {
            bits.extend(red.iter().map(|x| x.to_bits()));
        }
        keep(&out, &world, bits);
    }
    Ok(())
}

/// A run's report names the collectives MPI ran (`mpi_library`) and those mpsim's algorithms
/// ran (a user operation's allreduce, a nonblocking one on a fresh communicator).
fn native_report_case() -> Result<()> {
    let out = std::path::PathBuf::from(std::env::var("MPSIM_MPI_OUT").expect("the harness's dir"));
    let report = out.join("native-report.json");
    Launcher::new(RANKS)
        .backend(Backend::Mpi)
        .report_out(&report)
        .run(|world: Comm| async move {
            let mut x = [0u64];
            world.allreduce(&[1u64], &mut x, &Op::sum()).await?;
            assert_eq!(x[0], u64::from(RANKS));
            let mut all = [0u64; RANKS as usize];
            world
                .allgatherv(&[1u64], &mut all, &[1; RANKS as usize])
                .await?;
            let mut part = [0u64];
            world
                .ireduce_scatter(&all, &mut part, &[1; RANKS as usize], &Op::sum())?
                .wait()
                .await?;
            assert_eq!(part[0], u64::from(RANKS));
            let user = Op::user(|a: &[u64], b: &mut [u64]| b[0] += a[0], true);
            world.allreduce(&[1u64], &mut x, &user).await?;
            assert_eq!(x[0], u64::from(RANKS));
            // A nonblocking collective on a communicator that has no MPI communicator yet (no
            // blocking collective on it so far): mpsim's algorithm.
            let dup = world.dup()?;
            dup.iallreduce(&[2u64], &mut x, &Op::sum())?.wait().await?;
            assert_eq!(x[0], 2 * u64::from(RANKS));
            let sub = world
                .split(Some(world.rank() % 2), 0)
                .await?
                .expect("a color");
            sub.barrier().await?;
            sub.barrier().await
        })?;
    if std::env::var("OMPI_COMM_WORLD_RANK").as_deref() != Ok("0") {
        return Ok(());
    }
    let text = std::fs::read_to_string(&report).expect("the report");
    let report: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let lines = report["collectives"].as_array().expect("collectives");
    let calls = |coll: &str, algo: &str| {
        lines
            .iter()
            .filter(|l| l["collective"] == coll && l["algorithm"] == algo)
            .map(|l| l["calls"].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    assert_eq!(calls("allreduce", "mpi_library"), 1, "{text}");
    assert_eq!(calls("allgatherv", "mpi_library"), 1, "{text}");
    assert_eq!(calls("reduce_scatter", "mpi_library"), 1, "{text}");
    assert_eq!(calls("allreduce", "recursive_doubling"), 2, "{text}");
    // Two barriers on rank 0's half, by MPI (the report is rank 0's: its half's calls).
    assert_eq!(calls("barrier", "mpi_library"), 2, "{text}");
    Ok(())
}

/// The p2p stress program (`p2p_stress.rs`) on 4 ranks: every mode, blocking, nonblocking
/// and persistent-style starts, sizes up to 256 KiB, wildcard receives; each rank checks every
/// message meant for it (count and bytes here).
fn stress_case() -> Result<()> {
    const SEED: u64 = 0x5EED_0000_0004_0037;
    const TOTAL: usize = 4_000;
    let plan = stress::Plan::new(SEED, RANKS, TOTAL);
    let tally = Arc::new(stress::Tally::default());
    let t = Arc::clone(&tally);
    let ran = Launcher::new(RANKS)
        .backend(Backend::Mpi)
        .run(move |world| {
            let t = Arc::clone(&t);
            async move { stress::stress_rank(world, SEED, TOTAL, t).await }
        });
    ran?;
    // This rank's share: the messages the plan sends to it.
    let me: u32 = std::env::var("OMPI_COMM_WORLD_RANK")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0);
    let mine: Vec<_> = plan.messages().filter(|m| m.dst == me).collect();
    let load = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
    let (messages, bytes) = (load(&tally.messages), load(&tally.bytes));
    assert_eq!(messages, mine.len() as u64, "rank {me}: messages");
    assert_eq!(
        bytes,
        mine.iter().map(|m| m.bytes as u64).sum::<u64>(),
        "rank {me}: bytes"
    );
    Ok(())
}

/// `--report-out` and `--trace` under mpi: rank 0 writes the report (JSON: one entry per
/// rank, in rank order, each rank's traffic as it sent it) and a trace that is valid JSON
/// whose every message arrow ends where it starts and whose ranks each have a track.
fn report_and_trace_case() -> Result<()> {
    // The harness's directory, the same for every rank.
    let out = std::path::PathBuf::from(std::env::var("MPSIM_MPI_OUT").expect("the harness's dir"));
    let report = out.join("report.json");
    let trace = out.join("trace.json");
    Launcher::new(RANKS)
        .backend(Backend::Mpi)
        .report_out(&report)
        .trace(&trace)
        .run(|world: Comm| async move {
            let me = world.rank();
            let n = world.size();
            let mut got = [0u8; 32];
            for _ in 0..3 {
                world.send(&[me as u8; 32], (me + 1) % n, 1).await?;
                world.recv(&mut got, (me + n - 1) % n, 1).await?;
            }
            world.compute(std::time::Duration::from_micros(200)).await;
            world.barrier().await
        })?;
    if std::env::var("OMPI_COMM_WORLD_RANK").as_deref() != Ok("0") {
        return Ok(());
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("the report")).expect("JSON");
    assert_eq!(report["backend"], "mpi");
    let ranks = report["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), RANKS as usize);
    for (r, line) in ranks.iter().enumerate() {
        assert_eq!(line["rank"], r as u64);
        // 3 ring messages of 32 bytes, plus the barrier's own (at least one each way).
        let sent: u64 = line["sent"]["bytes"]
            .as_array()
            .expect("bytes")
            .iter()
            .map(|b| b.as_u64().unwrap_or(0))
            .sum();
        assert!(sent >= 96, "rank {r} sent {sent} bytes");
        assert!(
            line["compute_ns"].as_u64().unwrap_or(0) >= 200_000,
            "{line}"
        );
    }
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).expect("the trace")).expect("JSON");
    let events = trace["traceEvents"].as_array().expect("events");
    let ids = |ph: &str| {
        let mut ids: Vec<u64> = events
            .iter()
            .filter(|e| e["ph"] == ph)
            .filter_map(|e| e["id"].as_u64())
            .collect();
        ids.sort_unstable();
        ids
    };
    let (starts, ends) = (ids("s"), ids("f"));
    assert!(
        starts.len() >= 12 && starts == ends,
        "{} starts, {} ends",
        starts.len(),
        ends.len()
    );
    for r in 0..RANKS {
        assert!(
            events
                .iter()
                .any(|e| e["ph"] == "X" && e["tid"] == r && e["name"] == "compute"),
            "rank {r} has no compute span"
        );
    }
    Ok(())
}

/// The bytes of the messages of [`over_2_gib_case`]: past `i32::MAX`, not a multiple of 1 GiB.
const OVER_2_GIB: usize = (1 << 31) + 4099;

/// Byte `i` of a message of [`over_2_gib_case`] with `seed`.
fn big_byte(i: usize, seed: u8) -> u8 {
    (i % 251) as u8 ^ seed
}

/// Whether `buf` is the message with `seed` (every byte).
fn big_is(buf: &[u8], seed: u8) -> bool {
    buf.len() == OVER_2_GIB && buf.iter().enumerate().all(|(i, &b)| b == big_byte(i, seed))
}

/// Messages of more than `i32::MAX` bytes (MPI's `int` counts) between 2 ranks: on the world
/// (MPI matches) in the standard, synchronous and ready modes, after a probe and a matched
/// probe; on a dup (the backend matches: `MPI_Improbe`, `MPI_Mrecv`); a bcast (mpsim's
/// algorithm: beyond the library's counts); a buffered send, which MPI cannot buffer (its
/// buffer's size is an `int`): a clear error. A [`BIG_CASES`] case.
fn over_2_gib_case() -> Result<()> {
    Launcher::new(BIG_RANKS)
        .backend(Backend::Mpi)
        .run(|world: Comm| async move {
            let dup = world.dup()?;
            let me = world.rank();
            let mut buf = vec![0u8; OVER_2_GIB];
            let fill = |buf: &mut Vec<u8>, seed: u8| {
                buf.iter_mut()
                    .enumerate()
                    .for_each(|(i, b)| *b = big_byte(i, seed))
            };
            if me == 0 {
                fill(&mut buf, 1);
                world.send(&buf, 1, 1).await?;
                fill(&mut buf, 2);
                world.ssend(&buf, 1, 2).await?;
                world.barrier().await?;
                fill(&mut buf, 3);
                world.rsend(&buf, 1, 3).await?;
                fill(&mut buf, 4);
                world.send(&buf, 1, 4).await?;
                fill(&mut buf, 5);
                world.send(&buf, 1, 5).await?;
                fill(&mut buf, 6);
                dup.send(&buf, 1, 6).await?;
                fill(&mut buf, 7);
                dup.ssend(&buf, 1, 7).await?;
                fill(&mut buf, 8);
            } else {
                let s = world.recv(&mut buf, 0, 1).await?;
                assert!(s.bytes == OVER_2_GIB && big_is(&buf, 1), "send");
                let s = world.recv(&mut buf, 0, 2).await?;
                assert!(s.bytes == OVER_2_GIB && big_is(&buf, 2), "ssend");
                {
                    let req = world.irecv(&mut buf, 0, 3)?;
                    world.barrier().await?;
                    let s = req.wait().await?;
                    assert_eq!(s.bytes, OVER_2_GIB, "rsend");
                }
                assert!(big_is(&buf, 3), "rsend");
                let s = world.probe(0, 4).await?;
                assert_eq!(s.bytes, OVER_2_GIB, "probe");
                let s = world.recv(&mut buf, 0, 4).await?;
                assert!(s.bytes == OVER_2_GIB && big_is(&buf, 4), "recv after probe");
                let m = world.mprobe(0, 5).await?;
                assert_eq!(m.status().bytes, OVER_2_GIB, "mprobe");
                let s = m.mrecv(&mut buf).await?;
                assert!(s.bytes == OVER_2_GIB && big_is(&buf, 5), "mrecv");
                let s = dup.probe(0, 6).await?;
                assert_eq!(s.bytes, OVER_2_GIB, "probe on a dup");
                let s = dup.recv(&mut buf, 0, 6).await?;
                assert!(s.bytes == OVER_2_GIB && big_is(&buf, 6), "send on a dup");
                let s = dup.recv(&mut buf, 0, 7).await?;
                assert!(s.bytes == OVER_2_GIB && big_is(&buf, 7), "ssend on a dup");
            }
            world.bcast(&mut buf, 0).await?;
            assert!(big_is(&buf, 8), "bcast");
            drop(buf);
            if me == 0 {
                let attached = world.buffer_attach(OVER_2_GIB + BSEND_OVERHEAD);
                let text = attached.expect_err("an attach MPI cannot take").to_string();
                assert!(text.contains("buffer_attach"), "{text}");
            }
            world.barrier().await
        })
}
