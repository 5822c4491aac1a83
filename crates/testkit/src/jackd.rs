//! A JACK server of the test's own: `jackd` with the dummy driver (no sound card) under a
//! name private to the test, so that a test that changes the server's buffer size disturbs
//! no other test nor a server the user runs. Clients find it through `JACK_DEFAULT_SERVER`
//! ([`DummyServer::name`]): set it in a child's environment, or in the test process's own
//! when the client is in process (in a test binary of one test). The server is stopped when
//! the value is dropped.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `jackd -d dummy`, stopped on drop.
#[derive(Debug)]
pub struct DummyServer {
    name: String,
    child: Child,
}

/// Whether `cmd` is on the `PATH`.
pub fn has(cmd: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {cmd} >/dev/null"))
        .status()
        .is_ok_and(|s| s.success())
}

impl DummyServer {
    /// Starts `jackd -n NAME -d dummy -r RATE -p FRAMES`, NAME made of `tag` and this
    /// process's id, and waits until it accepts clients (at most 10 s). `Err` says why not
    /// (jackd not installed: package jackd2; or it did not start, with its log), for the
    /// caller to skip visibly.
    pub fn start(tag: &str, rate: u32, frames: usize) -> Result<DummyServer, String> {
        if !has("jackd") {
            return Err("jackd is not installed (Debian package jackd2)".into());
        }
        let name = format!("fugue-{tag}-{}", std::process::id());
        let log = std::env::temp_dir().join(format!("{name}.log"));
        let out = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new("jackd")
            .args(["-n", &name, "-d", "dummy", "-r", &rate.to_string()])
            .args(["-p", &frames.to_string()])
            .env("JACK_NO_AUDIO_RESERVATION", "1")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start jackd: {e}"))?;
        let mut server = DummyServer { name, child };
        let start = Instant::now();
        while !server.running() {
            let exited = server.child.try_wait().ok().flatten();
            if exited.is_some() || start.elapsed() > Duration::from_secs(10) {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(format!("jackd did not start; its log:\n{text}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
    }

    /// The server's name: the value of `JACK_DEFAULT_SERVER` for its clients.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the server accepts clients (`jack_wait -c`).
    fn running(&self) -> bool {
        Command::new("jack_wait")
            .arg("-c")
            .env("JACK_DEFAULT_SERVER", &self.name)
            .stderr(Stdio::null())
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "running")
    }

    /// Sets the server's buffer size with `jack_bufsize` (package jackd2).
    pub fn set_buffer(&self, frames: usize) -> Result<(), String> {
        let o = Command::new("jack_bufsize")
            .arg(frames.to_string())
            .env("JACK_DEFAULT_SERVER", &self.name)
            .output()
            .map_err(|e| format!("cannot run jack_bufsize: {e}"))?;
        if o.status.success() {
            Ok(())
        } else {
            Err(format!(
                "jack_bufsize {frames} failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ))
        }
    }
}

impl Drop for DummyServer {
    fn drop(&mut self) {
        // Its own child, by its id: asked to stop first, so that it takes its entry out of
        // JACK's registry of servers (a killed server leaves it behind, and JACK refuses new
        // servers when the registry is full), killed if it does not within 5 s.
        // SAFETY: kill has no memory-safety preconditions; the pid is our child's, not yet
        // waited for (so not reused).
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
