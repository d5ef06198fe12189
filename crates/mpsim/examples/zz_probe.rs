use mpsim::{Comm, Launcher, Op};
fn main() {
    let p: u32 = std::env::args().nth(1).unwrap().parse().unwrap();
    let which: u32 = std::env::args().nth(2).unwrap().parse().unwrap();
    let ns = match which {
        0 => Launcher::new(p)
            .simulate(|_w: Comm| async move { Ok(()) })
            .report
            .run_ns(),
        1 => Launcher::new(p)
            .simulate(|w: Comm| async move { w.barrier().await })
            .report
            .run_ns(),
        2 => Launcher::new(p)
            .simulate(|w: Comm| async move {
                let mut o = [0u64];
                w.allreduce(&[1u64], &mut o, &Op::sum()).await
            })
            .report
            .run_ns(),
        _ => Launcher::new(p)
            .simulate(|w: Comm| async move {
                let r = w.rank();
                let n = w.size();
                let mut b = [0u8; 8];
                w.sendrecv(&[1u8; 8], (r + 1) % n, 0, &mut b, (r + n - 1) % n, 0)
                    .await
                    .map(drop)
            })
            .report
            .run_ns(),
    };
    eprintln!("ns {ns}");
}
