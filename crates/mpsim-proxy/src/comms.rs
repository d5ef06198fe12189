//! The communicators a C rank makes from lists of ranks: `MPI_Comm_create_group`
//! (`Comm::create_group`) and an intercommunicator's point-to-point side (`Comm::intercomm`,
//! which the C library's `MPI_Intercomm_create` and the calls on intercommunicators build on:
//! `docs/c.md`).

use mpsim::Result;
use mpsim_door::wire::Op;

use crate::exec::bad;
use crate::proxy::{Answer, Proxy};

/// Executes [`Op::CommCreateGroup`] or [`Op::CommInter`] (their docs say the arguments).
pub(crate) fn make(
    p: &mut Proxy<'_>,
    op: Op,
    call: &'static str,
    a: &[i64],
    payload: &[u8],
) -> Result<Answer> {
    let c = p.comm(a[0], call)?;
    let er = p.comms.get(&a[0]).is_some_and(|h| h.errors_return);
    let ranks: Vec<u32> = payload
        .chunks_exact(4)
        .map(|b| u32::from_ne_bytes(b.try_into().unwrap_or([0; 4])))
        .collect();
    let made = match op {
        Op::CommCreateGroup => {
            let tag = i32::try_from(a[1]).map_err(|_| bad(call, "the tag is out of range"))?;
            c.create_group(&ranks, tag)?
        }
        _ => {
            let n = usize::try_from(a[1])
                .ok()
                .filter(|&n| n <= ranks.len())
                .ok_or_else(|| bad(call, "the local group's size is out of range"))?;
            c.intercomm(&ranks[..n], &ranks[n..])?
        }
    };
    Ok(Answer::v(&p.add_comm(Some(made), er)))
}
