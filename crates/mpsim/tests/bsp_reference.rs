//! A property test: random DRMA and BSMP traffic over random supersteps delivers exactly what
//! a sequential reference of `spec/bsplib.md` §1 says — gets read before puts land, get
//! results in issue order, puts by source pid then issue order (the last wins), queues of
//! exactly the superstep's messages by source pid then send order, none twice, none late —
//! on `sim` and on `threads`, identically.

#[path = "common/bsp.rs"]
mod harness;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mpsim::bsp::{Ctx, Pending};
use mpsim::{Backend, Result};
use proptest::prelude::*;

/// Elements per registration; two registrations of `u32`.
const LEN: usize = 6;
const REGS: usize = 2;

#[derive(Clone, Debug)]
enum Op {
    Put {
        to: u32,
        reg: usize,
        off: usize,
        vals: Vec<u32>,
    },
    /// A get whose result is taken after the sync.
    Get {
        from: u32,
        reg: usize,
        off: usize,
        len: usize,
    },
    /// A get into a local registration.
    GetInto {
        from: u32,
        reg: usize,
        off: usize,
        dst: usize,
        doff: usize,
        len: usize,
    },
    Send {
        to: u32,
        payload: Vec<u8>,
    },
    /// Local writes, before or after communication of the superstep.
    Write {
        reg: usize,
        off: usize,
        val: u32,
    },
}

/// `script[k][pid]`: what process `pid` does in superstep `k`.
type Script = Vec<Vec<Vec<Op>>>;

fn op(p: u32) -> impl Strategy<Value = Op> {
    let range = (0..LEN).prop_flat_map(|off| (Just(off), 1..=LEN - off));
    prop_oneof![
        (0..p, 0..REGS, range.clone(), any::<u32>()).prop_map(|(to, reg, (off, len), v)| {
            Op::Put {
                to,
                reg,
                off,
                vals: (0..len as u32).map(|i| v.wrapping_add(i)).collect(),
            }
        }),
        (0..p, 0..REGS, range.clone()).prop_map(|(from, reg, (off, len))| Op::Get {
            from,
            reg,
            off,
            len
        }),
        (0..p, 0..REGS, range, 0..REGS).prop_flat_map(|(from, reg, (off, len), dst)| {
            (0..=LEN - len).prop_map(move |doff| Op::GetInto {
                from,
                reg,
                off,
                dst,
                doff,
                len,
            })
        }),
        (0..p, proptest::collection::vec(any::<u8>(), 0..5))
            .prop_map(|(to, payload)| Op::Send { to, payload }),
        (0..REGS, 0..LEN, any::<u32>()).prop_map(|(reg, off, val)| Op::Write { reg, off, val }),
    ]
}

fn script() -> impl Strategy<Value = (u32, Script)> {
    (1u32..=4, 1usize..=4).prop_flat_map(|(p, steps)| {
        let process = proptest::collection::vec(op(p), 0..6);
        let step = proptest::collection::vec(process, p as usize);
        (Just(p), proptest::collection::vec(step, steps))
    })
}

/// What a process sees at the start of a superstep (after the sync ending the previous one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Seen {
    areas: Vec<Vec<u32>>,
    /// (tag, payload) in queue order.
    queue: Vec<(Vec<u8>, Vec<u8>)>,
    /// Results of the previous superstep's `Get`s, in issue order.
    gets: Vec<Vec<u32>>,
}

/// The sequential reference: `seen[k][pid]` for k = 1..=steps.
fn reference(p: u32, script: &Script) -> Vec<Vec<Seen>> {
    let p = p as usize;
    let mut areas = vec![vec![vec![0u32; LEN]; REGS]; p];
    let mut out = Vec::new();
    for (k, step) in script.iter().enumerate() {
        let tag = vec![k as u8];
        // Local writes happen during the superstep, before the sync reads anything.
        for (s, ops) in step.iter().enumerate() {
            for o in ops {
                if let Op::Write { reg, off, val } = o {
                    areas[s][*reg][*off] = *val;
                }
            }
        }
        let before = areas.clone();
        let mut gets = vec![Vec::new(); p];
        let mut queues = vec![Vec::new(); p];
        // Get results, each process into its own memory, in issue order.
        for (s, ops) in step.iter().enumerate() {
            for o in ops {
                match o {
                    Op::Get {
                        from,
                        reg,
                        off,
                        len,
                    } => gets[s].push(before[*from as usize][*reg][*off..off + len].to_vec()),
                    Op::GetInto {
                        from,
                        reg,
                        off,
                        dst,
                        doff,
                        len,
                    } => {
                        let v = before[*from as usize][*reg][*off..off + len].to_vec();
                        areas[s][*dst][*doff..doff + len].copy_from_slice(&v);
                    }
                    _ => {}
                }
            }
        }
        // Puts and messages by source pid, then issue order.
        for (s, ops) in step.iter().enumerate() {
            for o in ops {
                match o {
                    Op::Put { to, reg, off, vals } => {
                        areas[*to as usize][*reg][*off..off + vals.len()].copy_from_slice(vals)
                    }
                    Op::Send { to, payload } => {
                        queues[*to as usize].push((tag.clone(), payload.clone()))
                    }
                    _ => {}
                }
            }
            let _ = s;
        }
        out.push(
            (0..p)
                .map(|s| Seen {
                    areas: areas[s].clone(),
                    queue: queues[s].clone(),
                    gets: gets[s].clone(),
                })
                .collect(),
        );
    }
    out
}

type Seens = Arc<Mutex<BTreeMap<(usize, u32), Seen>>>;

/// The same script run by `p` processes on `backend`: `seen[k][pid]`.
fn actual(p: u32, script: &Script, backend: Backend) -> Vec<Vec<Seen>> {
    let seens: Seens = Arc::default();
    let (sc, se) = (Arc::new(script.clone()), seens.clone());
    let program = move |ctx: Ctx| process(ctx, sc.clone(), se.clone());
    harness::run(p, backend, program).expect("the run succeeds");
    let all = seens.lock().unwrap();
    (0..script.len())
        .map(|k| (0..p).map(|s| all[&(k, s)].clone()).collect())
        .collect()
}

async fn process(mut ctx: Ctx, script: Arc<Script>, seens: Seens) -> Result<()> {
    let s = ctx.pid();
    let regs = [ctx.push_reg::<u32>(LEN)?, ctx.push_reg::<u32>(LEN)?];
    ctx.set_tagsize(1);
    ctx.sync().await?;
    for (k, step) in script.iter().enumerate() {
        let mut pending: Vec<Pending<u32>> = Vec::new();
        let tag = [k as u8];
        for o in &step[s as usize] {
            match o {
                Op::Put { to, reg, off, vals } => ctx.put(*to, &regs[*reg], *off, vals)?,
                Op::Get {
                    from,
                    reg,
                    off,
                    len,
                } => pending.push(ctx.get(*from, &regs[*reg], *off, *len)?),
                Op::GetInto {
                    from,
                    reg,
                    off,
                    dst,
                    doff,
                    len,
                } => ctx.get_into(*from, &regs[*reg], *off, &regs[*dst], *doff, *len)?,
                Op::Send { to, payload } => ctx.send(*to, &tag, payload)?,
                Op::Write { .. } => {}
            }
        }
        // Local writes after the calls: a put's source was copied at its call, a get reads
        // at the sync (the reference applies them before the sync).
        for o in &step[s as usize] {
            if let Op::Write { reg, off, val } = o {
                ctx.local_mut(&regs[*reg])?[*off] = *val;
            }
        }
        ctx.sync().await?;
        let mut seen = Seen::default();
        for r in &regs {
            seen.areas.push(ctx.local(r)?.to_vec());
        }
        seen.queue = ctx
            .messages()
            .map(|m| (m.tag.to_vec(), m.payload.to_vec()))
            .collect();
        for g in pending {
            seen.gets.push(ctx.take(g)?);
        }
        seens.lock().unwrap().insert((k, s), seen);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn bsp_reference_random_traffic_sim((p, script) in script()) {
        prop_assert_eq!(actual(p, &script, Backend::Sim), reference(p, &script));
    }

    #[test]
    fn bsp_reference_random_traffic_threads((p, script) in script()) {
        prop_assert_eq!(actual(p, &script, Backend::Threads), reference(p, &script));
    }
}
