//! Starting threads: `std::thread` normally, `loom::thread` under loom (a model thread, which
//! has no name and no placement).

/// A started thread, to join.
#[cfg(not(loom))]
pub use std::thread::JoinHandle;

/// A started thread, to join.
#[cfg(loom)]
pub use loom::thread::JoinHandle;

/// Starts a thread named `name` running `f`. Fails only when the system refuses a thread.
#[cfg(not(loom))]
pub fn spawn<F, T>(name: String, f: F) -> std::io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    std::thread::Builder::new().name(name).spawn(f)
}

/// Starts a model thread running `f` (the name is not kept).
#[cfg(loom)]
pub fn spawn<F, T>(name: String, f: F) -> std::io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let _ = name;
    Ok(loom::thread::spawn(f))
}
