//! Which public types may cross threads (the tokio `async_send_sync` table, in small).
//!
//! By design, everything tied to one rank stays on its rank's thread: `Comm`, `Request` and
//! `PersistentRequest` hold the rank's runtime (`Rc`) and are neither `Send` nor `Sync`; a rank's
//! program never needs to move them, and not paying for atomics keeps a simulated rank small.
//! Values that describe results or configure runs are `Send + Sync`, so a test harness or a
//! report writer can take them anywhere.

fn send_sync<T: Send + Sync>() {}

#[test]
fn results_and_configuration_are_send_and_sync() {
    send_sync::<mpsim::Error>();
    send_sync::<mpsim::Status>();
    send_sync::<mpsim::Site>();
    send_sync::<mpsim::PendingRequest>();
    send_sync::<mpsim::Launcher>();
    send_sync::<mpsim::LaunchArgs>();
    send_sync::<mpsim::Backend>();
    send_sync::<mpsim::sim::Model>();
    send_sync::<mpsim::sim::Report>();
    send_sync::<mpsim::sim::Outcome>();
}

#[test]
fn the_run_configuration_is_send_and_sync() {
    send_sync::<mpsim::RunConfig>();
}
