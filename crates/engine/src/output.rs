//! Output files: what stands at an output path, the temporary name a file is written under,
//! the step that gives a finished temporary file its name, and [`OutputFile`], an output path
//! named by a user, checked before any work is done.
//!
//! Every output is written whole into a temporary file first. A regular file (new, or
//! replaced as a whole, only when asked: `force`) then gets its name by a rename in its own
//! folder, so no half-written file ever stands under the name. A named pipe (FIFO) or a
//! character device (`/dev/null`, a pipe a player reads) is never replaced: the finished
//! bytes are written into it. A directory, a block device, a socket, a symbolic link to
//! nothing, a folder that does not exist, and an output that is one of the command's input
//! files are refused with one sentence naming the path; a symbolic link to a file stays a
//! link, and the file it points to is the one replaced.
//!
//! Temporary names are hidden and short (`.fugue-PID-N.part`, whatever the length of the
//! final name, so a final name of up to 255 bytes works). The ones a process left behind when
//! it died are removed by the next one that writes into the same folder; the ones in use are
//! registered ([`Temp`]) so that a process ending on a signal can remove them first
//! ([`remove_temps`]).

use std::io::Write as _;
use std::os::unix::fs::FileTypeExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// How long a dead process's temporary file is left alone before it is removed (a guard
/// against a writer whose process id this process cannot see, in another pid namespace).
const STALE_AFTER: Duration = Duration::from_secs(60);

/// What an output path names, and so how it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// Nothing stands there: a new regular file is created.
    New(PathBuf),
    /// A regular file, replaced as a whole (for a symbolic link, the file it points to).
    File(PathBuf),
    /// A named pipe or a character device: written directly, never replaced.
    Stream(PathBuf),
}

impl Destination {
    /// The path the bytes go to (a symbolic link resolved).
    pub fn path(&self) -> &Path {
        match self {
            Destination::New(p) | Destination::File(p) | Destination::Stream(p) => p,
        }
    }

    /// Whether the destination is a named pipe or a character device.
    pub fn is_stream(&self) -> bool {
        matches!(self, Destination::Stream(_))
    }
}

/// Why an output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// A regular file stands at the path and replacing it was not asked for.
    #[error("{} already exists; pass --force to overwrite it", .0.display())]
    Exists(PathBuf),
    /// A file appeared at the path while the command ran (another process wrote it), where
    /// nothing stood when the output was checked; it is not replaced without `--force`.
    #[error("{} appeared while this command ran (another process wrote it); it was not replaced, and this command's output was dropped: pass --force to replace it", .0.display())]
    Appeared(PathBuf),
    /// The output is one of the command's input files.
    #[error("{} is the input file {}; name another output file", .path.display(), .input.display())]
    IsInput {
        /// The output path as given.
        path: PathBuf,
        /// The input file it is.
        input: PathBuf,
    },
    /// The output's name is not that of the format the command writes (a regular file not
    /// named `.wav` for a WAV file): the command's sentence.
    #[error("{0}")]
    Format(String),
    /// The path names something that cannot be written as asked: a directory, a block
    /// device, a socket, a symbolic link to nothing, a folder that does not exist.
    #[error("{0}")]
    Refused(String),
    /// A file could not be created, written or renamed.
    #[error("{what}")]
    Io {
        /// What failed (names the file; says when the disk is full).
        what: String,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
}

impl OutputError {
    /// An I/O error about `what`, with "the disk is full" added when it is.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> OutputError {
        let mut what = what.into();
        if is_disk_full(&source) {
            what.push_str(": the disk is full");
        }
        OutputError::Io { what, source }
    }
}

/// An I/O error about `path`, with "the disk is full" said when it is.
fn write_error(path: &Path, e: std::io::Error) -> OutputError {
    OutputError::io(format!("cannot write {}", path.display()), e)
}

/// Whether `e` says the file system is full (ENOSPC) or the user's quota is spent (EDQUOT).
pub fn is_disk_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// The sentence for a path one of whose folders is not a folder (ENOTDIR): names the first
/// that is something else.
fn not_a_folder(path: &Path) -> String {
    let mut ancestors: Vec<&Path> = path.ancestors().skip(1).collect();
    ancestors.reverse();
    let culprit = ancestors
        .into_iter()
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| std::fs::metadata(a).is_ok_and(|m| !m.is_dir()));
    match culprit {
        Some(c) => format!(
            "cannot write {}: {} is a file, not a folder",
            path.display(),
            c.display()
        ),
        None => format!(
            "cannot write {}: a part of the path before its name is not a folder",
            path.display()
        ),
    }
}

/// Looks at what stands at `path` and says how an output there is written; refuses (with a
/// sentence naming the path) a directory, a block device, a socket, or a symbolic link to
/// nothing.
pub fn destination(path: &Path) -> Result<Destination, OutputError> {
    let shown = path.display();
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Destination::New(path.to_path_buf()))
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
            return Err(OutputError::Refused(not_a_folder(path)))
        }
        Err(e) => return Err(write_error(path, e)),
        Ok(m) => m,
    };
    let (resolved, meta) = if meta.file_type().is_symlink() {
        match std::fs::metadata(path) {
            // A link to a regular file: the file is the one replaced (renamed over), in its
            // own folder.
            Ok(m) if m.file_type().is_file() => (
                std::fs::canonicalize(path).map_err(|e| write_error(path, e))?,
                m,
            ),
            // A link to a stream (`/dev/stdout` when standard output is a pipe, whose target
            // `pipe:[N]` is no path): written through the link, as named.
            Ok(m) => (path.to_path_buf(), m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let to = std::fs::read_link(path)
                    .map(|t| t.display().to_string())
                    .unwrap_or_default();
                return Err(OutputError::Refused(format!(
                    "{shown} is a symbolic link to {to}, which does not exist; remove the link or name another file"
                )));
            }
            Err(e) => return Err(write_error(path, e)),
        }
    } else {
        (path.to_path_buf(), meta)
    };
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(Destination::File(resolved));
    }
    if ft.is_fifo() || ft.is_char_device() {
        return Ok(Destination::Stream(resolved));
    }
    if ft.is_dir() {
        return Err(OutputError::Refused(format!(
            "{shown} is a directory; name a file (in it, for example)"
        )));
    }
    let what = if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(OutputError::Refused(format!(
        "{shown} is {what}; outputs are written to regular files, named pipes and character devices only"
    )))
}

/// Whether the folder `dir` stands or can be made, checked before a run that fills it (so that
/// its results are not lost after the run): `Err` with the sentence when `dir` is a symbolic
/// link to nothing, or the nearest of its folders that stands is not a folder, or cannot be
/// written into.
pub fn folder_can_be_made(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        if let Ok(target) = std::fs::read_link(dir) {
            return Err(format!(
                "{} is a symbolic link to {}, which does not exist; name a folder",
                dir.display(),
                target.display()
            ));
        }
    }
    let stands = dir
        .ancestors()
        .map(|a| {
            if a.as_os_str().is_empty() {
                Path::new(".")
            } else {
                a
            }
        })
        .find(|a| std::fs::symlink_metadata(a).is_ok());
    let Some(at) = stands else {
        return Ok(());
    };
    if !at.is_dir() {
        return Err(format!(
            "cannot make the folder {}: {} is not a folder",
            dir.display(),
            at.display()
        ));
    }
    names_fit(dir, at)?;
    may_add_to(at).map_err(|why| {
        if at == dir {
            format!("cannot write into the folder {}: {why}", dir.display())
        } else {
            format!(
                "cannot make the folder {}: {}: {why}",
                dir.display(),
                at.display()
            )
        }
    })
}

/// The longest path the kernel takes, in bytes with its final NUL (`PATH_MAX`).
const PATH_MAX: usize = 4096;

/// Whether the names of `dir`, below `at` (its nearest folder that stands), are short enough
/// for the file system of `at` (`NAME_MAX`, 255 bytes on Linux's), and its path for the
/// kernel: a folder that cannot be made for its name's length is said before the run too.
fn names_fit(dir: &Path, at: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt as _;
    let name_max = std::ffi::CString::new(at.as_os_str().as_bytes())
        .ok()
        // SAFETY: a NUL-terminated path that lives through the call; pathconf only reads it.
        .map(|c| unsafe { libc::pathconf(c.as_ptr(), libc::_PC_NAME_MAX) })
        .filter(|&n| n > 0)
        .map_or(255, |n| n as usize);
    let below = dir.strip_prefix(at).unwrap_or(dir);
    let parts = below.components().count();
    for part in below.components() {
        let name = part.as_os_str().as_bytes();
        if name.len() > name_max {
            let which = if parts == 1 {
                "its name".to_string()
            } else {
                format!("the name {}", part.as_os_str().display())
            };
            return Err(format!(
                "cannot make the folder {}: {which} is {} bytes long, more than the {name_max} a name may have there",
                dir.display(),
                name.len()
            ));
        }
    }
    let len = dir.as_os_str().len();
    if len >= PATH_MAX {
        return Err(format!(
            "cannot make the folder {}: its path is {len} bytes long, more than the {} a path may have",
            dir.display(),
            PATH_MAX - 1
        ));
    }
    Ok(())
}

/// Whether this process may add a file to the folder `dir` (write and search it), by its
/// effective user and groups, as the kernel will judge the file's creation; a read-only file
/// system is refused too.
pub fn may_add_to(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt as _;
    // A path from the command line holds no NUL byte; were there one, the creation would say so.
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return Ok(());
    };
    // SAFETY: `c` is a NUL-terminated path that lives through the call; faccessat only reads it.
    let r = unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::W_OK | libc::X_OK,
            libc::AT_EACCESS,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A new temporary name for an output to `path`: hidden, in the same folder (so that the
/// rename that ends the write stays in one file system), or in the system's temporary folder
/// when `path` is a named pipe or a device. Removes the temporary files of dead processes
/// from that folder first.
pub fn temp_path(path: &Path) -> Result<PathBuf, OutputError> {
    let dest = destination(path)?;
    let dir = if dest.is_stream() {
        std::env::temp_dir()
    } else {
        match dest.path().parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        }
    };
    if !dir.is_dir() {
        return Err(OutputError::Refused(format!(
            "cannot write {}: folder {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    remove_stale(&dir, path);
    Ok(temp_name_in(&dir))
}

/// A new temporary name in folder `dir` for an output that has no path of its own (standard
/// output): as [`temp_path`], the temporary files of dead processes removed from `dir` first.
pub fn temp_path_in(dir: &Path) -> PathBuf {
    remove_stale(dir, Path::new(""));
    temp_name_in(dir)
}

/// A new temporary name in folder `dir` ([`temp_path`]'s form): `.fugue-PID-N.part`, `N`
/// drawn at random (from the standard library's randomly keyed hasher, over a counter), so
/// that no other user of a shared folder such as `/tmp` can foresee the name and put a
/// file or a link there first; [`Temp::create`] refuses a name that something already
/// holds, whatever it is.
fn temp_name_in(dir: &Path) -> PathBuf {
    use std::hash::BuildHasher as _;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    // Relaxed: a counter that only has to give distinct numbers.
    let count = NEXT.fetch_add(1, Ordering::Relaxed);
    // Below 10^12 (40 bits drawn): room for a writer of many files to number them after it
    // (`N × 10^6 + i`, still a number of this form).
    let n = std::hash::RandomState::new().hash_one(count) % 1_000_000_000_000;
    dir.join(format!(".fugue-{}-{n}.part", std::process::id()))
}

/// Gives the finished temporary file `tmp` its name `path`: a rename onto a regular file (or
/// the file a link points to), a copy into a named pipe or a device. `tmp` is gone after.
/// While a [`Together`] is open on this thread, a regular file's rename waits for its
/// [`Together::commit`] (`tmp` moves to a name of its own meanwhile).
pub fn commit(tmp: &Path, path: &Path) -> Result<(), OutputError> {
    if TOGETHER.with(|t| t.borrow().is_some()) {
        if let Ok(Destination::File(_) | Destination::New(_)) = destination(path) {
            return defer(tmp, path);
        }
    }
    commit_now(tmp, path)
}

/// Gives each temporary file of `files` its name, in order ([`commit`], with no
/// [`Together`] open), as one step that a signal does not cut in two: a process ending on a
/// signal meanwhile ([`remove_temps`]) waits for the last rename, so it never says that a
/// sequence of files was not written when part of it was. The first rename that fails ends
/// it: the files after it are removed, and its error is returned.
pub fn commit_all(files: Vec<(Temp, PathBuf)>) -> Result<(), OutputError> {
    let mut t = temps();
    let mut res = Ok(());
    let mut done = std::collections::HashSet::with_capacity(files.len());
    for (mut tmp, path) in files {
        if res.is_ok() {
            res = commit_now(&tmp.path, &path);
        } else {
            let _ = std::fs::remove_file(&tmp.path);
        }
        // Forgotten here, all together below: its drop would take the list's lock, held.
        done.insert(std::mem::take(&mut tmp.path));
        std::mem::forget(tmp);
    }
    t.files.retain(|r| !done.contains(&r.path));
    res
}

/// [`commit`], now.
fn commit_now(tmp: &Path, path: &Path) -> Result<(), OutputError> {
    let res = match destination(path) {
        Ok(Destination::Stream(dest)) => std::fs::File::open(tmp)
            .and_then(|mut from| {
                let mut to = std::fs::OpenOptions::new().write(true).open(&dest)?;
                std::io::copy(&mut from, &mut to)?;
                to.flush()
            })
            .map_err(|e| write_error(path, e)),
        Ok(d) => {
            give_mode(tmp, &d);
            std::fs::rename(tmp, d.path()).map_err(|e| write_error(path, e))
        }
        Err(e) => Err(e),
    };
    // After a rename the name is gone already; after a failure or a copy it is removed.
    let _ = std::fs::remove_file(tmp);
    res
}

std::thread_local! {
    /// What the open [`Together`] of this thread does as it is committed.
    static TOGETHER: std::cell::RefCell<Option<Vec<InSet>>> =
        const { std::cell::RefCell::new(None) };
}

/// A step of a [`Together`]'s commit.
#[derive(Debug)]
enum InSet {
    /// A finished file's temporary name, with its final path.
    Name(PathBuf, PathBuf),
    /// A file of an earlier set that this one has no part for, removed
    /// ([`remove_with_set`]).
    Remove(PathBuf),
}

/// Removes the regular file `path` (an earlier run's file that this one replaces by nothing):
/// at once, or while a [`Together`] is open on this thread, as it is committed (dropped
/// uncommitted, the file stays).
pub fn remove_with_set(path: &Path) {
    let deferred = TOGETHER.with(|t| match t.borrow_mut().as_mut() {
        Some(steps) => {
            steps.push(InSet::Remove(path.to_path_buf()));
            true
        }
        None => false,
    });
    if !deferred {
        remove_regular(path);
    }
}

/// Removes `path` when it is a regular file (not what a link points to, not a folder).
fn remove_regular(path: &Path) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        let _ = std::fs::remove_file(path);
    }
}

/// Keeps the finished temporary file `tmp` of `path` for the open [`Together`]: moved to a
/// temporary name of its own (the writer forgets and removes the name it used) and registered,
/// so that a process ending on a signal removes it too.
fn defer(tmp: &Path, path: &Path) -> Result<(), OutputError> {
    let dir = tmp.parent().unwrap_or(Path::new("."));
    let staged = temp_name_in(dir);
    // Registered first: a signal between the two steps finds the file under either name.
    register(&staged, path.display().to_string(), Removal::File);
    if let Err(e) = std::fs::rename(tmp, &staged) {
        forget_path(&staged);
        let _ = std::fs::remove_file(tmp);
        return Err(write_error(path, e));
    }
    TOGETHER.with(|t| {
        if let Some(steps) = t.borrow_mut().as_mut() {
            steps.push(InSet::Name(staged, path.to_path_buf()));
        }
    });
    Ok(())
}

/// Files that get their names together: while it is open, every regular file this thread
/// finishes ([`commit`], [`write_atomic`]) waits under its temporary name, and every removal
/// of [`remove_with_set`] waits too; [`Together::commit`] then renames them all, one after the
/// other, and dropping it without that removes the new files and leaves the old ones. A
/// results folder whose writing fails midway (a full disk, a figure that cannot be drawn)
/// keeps its earlier set of files whole; only a failure or a signal during the renames
/// themselves (a few system calls) can leave it mixed. (A new file of [`OutputFile::commit`],
/// which must not replace one that appeared meanwhile, gets its name at once.)
#[derive(Debug)]
pub struct Together {
    /// Whether this one opened the set (a nested one leaves it to the outer).
    outer: bool,
    /// Not `Send`: the set belongs to the thread that opened it.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Together {
    /// Opens a set on this thread (within an open one: part of it).
    pub fn open() -> Together {
        let outer = TOGETHER.with(|t| {
            let mut t = t.borrow_mut();
            let outer = t.is_none();
            if outer {
                *t = Some(Vec::new());
            }
            outer
        });
        Together {
            outer,
            _thread: std::marker::PhantomData,
        }
    }

    /// Gives every file of the set its name and removes what the set removes, in the order
    /// they came; the first rename that fails ends it (the files after it are removed, the
    /// removals after it not made) and is returned.
    pub fn commit(self) -> Result<(), OutputError> {
        if !self.outer {
            return Ok(());
        }
        let steps = TOGETHER.with(|t| t.borrow_mut().take()).unwrap_or_default();
        let mut res = Ok(());
        for step in steps {
            match step {
                InSet::Name(staged, path) => {
                    forget_path(&staged);
                    if res.is_ok() {
                        res = commit_now(&staged, &path);
                    } else {
                        let _ = std::fs::remove_file(&staged);
                    }
                }
                InSet::Remove(path) if res.is_ok() => remove_regular(&path),
                InSet::Remove(_) => {}
            }
        }
        res
    }
}

impl Drop for Together {
    fn drop(&mut self) {
        if !self.outer {
            return;
        }
        // Not committed (the writing failed): the set's files are removed, the older ones
        // left as they were.
        let steps = TOGETHER.with(|t| t.borrow_mut().take()).unwrap_or_default();
        for step in steps {
            if let InSet::Name(staged, _) = step {
                forget_path(&staged);
                let _ = std::fs::remove_file(&staged);
            }
        }
    }
}

/// Gives the temporary file `tmp` (private while it is written, [`Temp::create`]) the
/// permissions its destination `d` has: a file replaced keeps its own (a private file stays
/// private), a new file gets what the process's umask leaves of read and write for all.
fn give_mode(tmp: &Path, d: &Destination) {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = match d {
        Destination::File(old) => match std::fs::metadata(old) {
            Ok(m) => m.permissions().mode(),
            Err(_) => return,
        },
        Destination::New(_) => 0o666 & !umask(),
        Destination::Stream(_) => return,
    };
    let _ = std::fs::set_permissions(tmp, std::fs::Permissions::from_mode(mode));
}

/// The process's file-creation mask, as `/proc/self/status` says it (read, not set: setting
/// it to read it would race with other threads creating files); 0o022 where it cannot be
/// read.
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

/// Gives the temporary file `tmp` the name `dest`, where no file may stand (the output
/// `path` as given, for messages): a rename that does not replace (`renameat2` with
/// `RENAME_NOREPLACE`), or on a file system without it a hard link and the removal of `tmp`.
/// A file that stands there is [`OutputError::Appeared`], and `tmp` is removed.
fn commit_new(tmp: &Path, dest: &Path, path: &Path) -> Result<(), OutputError> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes());
    give_mode(tmp, &Destination::New(dest.to_path_buf()));
    let res = match (c(tmp), c(dest)) {
        (Ok(from), Ok(to)) => {
            // SAFETY: two NUL-terminated paths, relative to the working directory.
            let rc = unsafe {
                libc::renameat2(
                    libc::AT_FDCWD,
                    from.as_ptr(),
                    libc::AT_FDCWD,
                    to.as_ptr(),
                    libc::RENAME_NOREPLACE,
                )
            };
            let e = std::io::Error::last_os_error();
            match (rc, e.raw_os_error()) {
                (0, _) => Ok(()),
                (_, Some(libc::EEXIST)) => Err(OutputError::Appeared(path.to_path_buf())),
                // No RENAME_NOREPLACE on this file system (or this kernel): a hard link
                // fails alike where a file stands.
                (_, Some(libc::EINVAL) | Some(libc::ENOSYS)) => match std::fs::hard_link(tmp, dest)
                {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        Err(OutputError::Appeared(path.to_path_buf()))
                    }
                    Err(e) => Err(write_error(path, e)),
                },
                _ => Err(write_error(path, e)),
            }
        }
        _ => Err(OutputError::Refused(format!(
            "cannot write {}: its name holds a NUL byte",
            path.display()
        ))),
    };
    let _ = std::fs::remove_file(tmp);
    res
}

/// Writes `bytes` to `path`: a regular file through a temporary file ([`Temp::create`]) and a
/// rename, so that no half-written file ever stands under the final name (nor is left behind
/// by a process that ends on a signal); a named pipe or a device directly.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    if let Destination::Stream(dest) = destination(path)? {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(dest)
            .and_then(|mut f| f.write_all(bytes))
            .map_err(|e| write_error(path, e));
    }
    let tmp = staged(path, bytes)?;
    let res = commit(tmp.path(), path);
    tmp.keep();
    res
}

/// `bytes` written whole (and synced) into a new temporary file for the output `path`, which
/// is yet to get its name.
fn staged(path: &Path, bytes: &[u8]) -> Result<Temp, OutputError> {
    let (tmp, mut f) = Temp::create(temp_path(path)?, path).map_err(|e| write_error(path, e))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| write_error(path, e))?;
    Ok(tmp)
}

/// The process id in a temporary name: `.fugue-PID-N.part…`, or the older form
/// `.NAME.PID.part` of an output named `NAME`.
fn owner(file: &str, name: &str) -> Option<i32> {
    if let Some(rest) = file.strip_prefix(".fugue-") {
        let (pid, rest) = rest.split_once('-')?;
        let (n, _) = rest.split_once(".part")?;
        n.parse::<u64>().ok()?;
        return pid.parse().ok();
    }
    let pid = file
        .strip_prefix('.')?
        .strip_prefix(name)?
        .strip_prefix('.')?
        .strip_suffix(".part")?;
    pid.parse().ok()
}

/// Whether `path` is a temporary file of this module's naming (`.fugue-PID-N.part`, a
/// regular file) that a process now dead left behind while it wrote: no part of what its
/// folder holds for its user (a run killed with SIGKILL leaves one).
pub fn is_dead_temp(path: &Path) -> bool {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy())
        .unwrap_or_default();
    file.starts_with(".fugue-")
        && dead_owner(&file, "")
        && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// Whether `file` is a temporary name ([`owner`], for an output named `name` in the older
/// form) of another process, now dead.
fn dead_owner(file: &str, name: &str) -> bool {
    let me = std::process::id() as i32;
    owner(file, name).is_some_and(|pid| pid != me && !alive(pid))
}

/// Whether the process `pid` is alive (or cannot be told apart from one that is).
fn alive(pid: i32) -> bool {
    if pid <= 0 {
        return true;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Removes from `dir` the temporary files that processes now dead left there while writing
/// (for `path`, in the older naming): regular files only, untouched for a while.
fn remove_stale(dir: &Path, path: &Path) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if !dead_owner(&e.file_name().to_string_lossy(), &name) {
            continue;
        }
        let old = std::fs::symlink_metadata(e.path()).is_ok_and(|m| {
            m.is_file()
                && m.modified()
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age >= STALE_AFTER)
        });
        if old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// How [`remove_temps`] takes a registered path away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Removal {
    /// A temporary file ([`Temp`]).
    File,
    /// A working folder, with what it holds ([`register_temp_dir`]).
    Tree,
    /// An output folder made for a run, only while it is still empty
    /// ([`register_empty_dir`]).
    IfEmpty,
}

/// A path registered for removal, with the output it is for (empty: none to name).
struct Registered {
    path: PathBuf,
    shown: String,
    how: Removal,
}

/// The temporary files and folders in use.
struct Temps {
    files: Vec<Registered>,
    /// Set by [`remove_temps`]: the process is ending, no temporary file is created after.
    closed: bool,
}

/// The temporary files in use.
static TEMPS: Mutex<Temps> = Mutex::new(Temps {
    files: Vec::new(),
    closed: false,
});

fn temps() -> std::sync::MutexGuard<'static, Temps> {
    // A thread that panicked holding the lock left the list consistent (each change is one
    // call).
    TEMPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes every temporary file in use ([`Temp`]) and registered folder, and returns the
/// outputs that were not written because of it, each named once (for a process about to end
/// on a signal). From then on [`Temp::create`] creates no file: one that a thread creates
/// meanwhile is either created before the removal (and removed) or refused.
pub fn remove_temps() -> Vec<String> {
    let mut t = temps();
    t.closed = true;
    let mut lost: Vec<String> = Vec::new();
    // Files and working trees first, then the folders taken away only when empty, the last
    // registered first (a folder's parents are registered before it): each is empty by then.
    let (mut empty_dirs, mut rest): (Vec<_>, Vec<_>) = std::mem::take(&mut t.files)
        .into_iter()
        .partition(|r| matches!(r.how, Removal::IfEmpty));
    empty_dirs.reverse();
    rest.extend(empty_dirs);
    for r in rest {
        let removed = match r.how {
            Removal::File => std::fs::remove_file(&r.path),
            Removal::Tree => std::fs::remove_dir_all(&r.path),
            // Only succeeds if the folder is empty.
            Removal::IfEmpty => std::fs::remove_dir(&r.path),
        }
        .is_ok();
        if removed && !r.shown.is_empty() && !lost.contains(&r.shown) {
            lost.push(r.shown);
        }
    }
    lost
}

/// Registers `path` for [`remove_temps`].
fn register(path: &Path, shown: String, how: Removal) {
    temps().files.push(Registered {
        path: path.to_path_buf(),
        shown,
        how,
    });
}

/// Forgets `path`: a folder of [`register_temp_dir`] or [`register_empty_dir`], or a
/// temporary file's name.
pub fn forget_path(path: &Path) {
    temps().files.retain(|r| r.path != path);
}

/// Registers the file `path` that this process made and removes as it ends (a control
/// socket), so that [`remove_temps`] removes it too when the process ends on a signal;
/// [`forget_path`] before removing it.
pub fn register_removal(path: &Path) {
    register(path, String::new(), Removal::File);
}

/// Registers the output folder `dir`, just made for a run's results: [`remove_temps`]
/// removes it if it is still empty (a run stopped before writing into it leaves no empty
/// folder); [`forget_path`] once the run is over.
pub fn register_empty_dir(dir: &Path) {
    register(dir, String::new(), Removal::IfEmpty);
}

/// Registers the working folder `dir` (a benchmark's builds), made or to be made by the
/// caller: [`remove_temps`] removes it with what it holds; [`forget_path`] when the caller
/// has removed it.
pub fn register_temp_dir(dir: &Path) {
    register(dir, String::new(), Removal::Tree);
}

/// A temporary file for the output `shown`: removed when dropped (unless it was given its
/// name, [`Temp::keep`]) and by [`remove_temps`].
#[derive(Debug)]
pub struct Temp {
    path: PathBuf,
    armed: bool,
}

impl Temp {
    /// Creates the temporary file `path`, for the output `shown`, and registers it, as one
    /// step that [`remove_temps`] cannot come between: the file is removed if the process
    /// ends on a signal, and none is created once it has begun to. Fails (`AlreadyExists`)
    /// when anything stands at `path`, a symbolic link included.
    pub fn create(path: PathBuf, shown: &Path) -> std::io::Result<(Temp, std::fs::File)> {
        let mut t = temps();
        if t.closed {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "the process is stopping",
            ));
        }
        // A new file only: never one that stands at the name already, nor the target of a
        // link put there; private while it is written (its destination's permissions are
        // given as it gets its name).
        let file = {
            use std::os::unix::fs::OpenOptionsExt as _;
            std::fs::File::options()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)?
        };
        t.files.push(Registered {
            path: path.clone(),
            shown: shown.display().to_string(),
            how: Removal::File,
        });
        Ok((Temp { path, armed: true }, file))
    }

    /// The temporary name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Forgets the file: it was renamed (or removed) by its writer.
    pub fn keep(mut self) {
        self.armed = false;
    }
}

/// Opens `path` to write it from its start (truncated). A temporary file of
/// [`Temp::create`] is written over and never created again: once [`remove_temps`] has
/// removed it (the process ending on a signal), the open fails instead of leaving a file
/// behind; nor is any file created after that. Any other path is created when missing.
///
/// A file that is already empty (a new temporary file) is not truncated again: on ext4, a
/// truncation to zero makes the file's `close` start the writeback of everything written
/// to it since (the file system's `auto_da_alloc`), which costs the closing thread about
/// 25 ms for a 60 MB render.
pub fn open_truncated(path: &Path) -> std::io::Result<std::fs::File> {
    let create = {
        let t = temps();
        !t.closed && !t.files.iter().any(|r| r.path == path)
    };
    let file = std::fs::File::options()
        .write(true)
        .create(create)
        .open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > 0 {
        file.set_len(0)?;
    }
    Ok(file)
}

impl Drop for Temp {
    fn drop(&mut self) {
        forget_path(&self.path);
        if self.armed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// An output path named by a user, checked before any work is done.
#[derive(Debug)]
pub struct OutputFile {
    /// The path as given.
    path: PathBuf,
    /// What stands there.
    dest: Destination,
}

/// Where `path` lies, whether or not it exists yet: its folder resolved (the canonical path of
/// the folder's longest existing ancestor, so `..` and symbolic links are followed there, then
/// the rest as written), then its own name, not followed (an output written there replaces a
/// link, not its target).
pub fn lies_at(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let (Some(name), Some(mut folder)) = (abs.file_name(), abs.parent()) else {
        return abs;
    };
    let mut rest = vec![name];
    let mut at = loop {
        match std::fs::canonicalize(folder) {
            Ok(f) => break f,
            Err(_) => match (folder.parent(), folder.file_name()) {
                (Some(parent), Some(n)) => {
                    rest.push(n);
                    folder = parent;
                }
                _ => break folder.to_path_buf(),
            },
        }
    };
    for n in rest.iter().rev() {
        at.push(n);
    }
    at
}

/// Whether `a` and `b` name one file, however each is spelled ([`lies_at`]), whether or not
/// it exists yet.
pub fn one_path(a: &Path, b: &Path) -> bool {
    lies_at(a) == lies_at(b)
}

/// The first of `inputs` that is the same file as `dest` (same device and inode).
pub fn same_file<'a>(dest: &Path, inputs: &[&'a Path]) -> Option<&'a Path> {
    let out = std::fs::metadata(dest).ok()?;
    inputs
        .iter()
        .copied()
        .find(|i| std::fs::metadata(i).is_ok_and(|m| m.dev() == out.dev() && m.ino() == out.ino()))
}

impl OutputFile {
    /// Checks that `path` may be written (see the module's documentation): an existing
    /// regular file only with `force`, never one of `inputs` (the files the command reads).
    pub fn check(path: &Path, force: bool, inputs: &[&Path]) -> Result<OutputFile, OutputError> {
        let out = OutputFile::at(path, force, inputs)?;
        // The folder exists (the temporary name is not used).
        temp_path(path)?;
        Ok(out)
    }

    /// What stands at `path`, refused where it is one of `inputs`, or a file without `force`.
    fn at(path: &Path, force: bool, inputs: &[&Path]) -> Result<OutputFile, OutputError> {
        // A name ending with `/` names a folder: one that exists is refused as such below;
        // one that does not is no file's name either (the write would fail only at its end,
        // after the command's work).
        use std::os::unix::ffi::OsStrExt;
        if path.as_os_str().as_bytes().ends_with(b"/") && !path.is_dir() {
            return Err(OutputError::Refused(format!(
                "cannot write {}: a name that ends with / names a folder, and there is none; name a file",
                path.display()
            )));
        }
        let dest = destination(path)?;
        if let Destination::File(p) = &dest {
            if let Some(input) = same_file(p, inputs) {
                return Err(OutputError::IsInput {
                    path: path.to_path_buf(),
                    input: input.to_path_buf(),
                });
            }
            if !force {
                return Err(OutputError::Exists(path.to_path_buf()));
            }
        }
        Ok(OutputFile {
            path: path.to_path_buf(),
            dest,
        })
    }

    /// [`OutputFile::check`] for one more output of a folder where `first`, an output
    /// already checked, goes (the frames of a sequence): the folder is not looked through
    /// again for dead processes' temporary files, which for a sequence of many frames in a
    /// folder of many files would cost the folder's size at every frame.
    pub fn check_beside(
        first: &OutputFile,
        path: &Path,
        force: bool,
        inputs: &[&Path],
    ) -> Result<OutputFile, OutputError> {
        if first.path.parent() != path.parent() || first.is_stream() {
            return OutputFile::check(path, force, inputs);
        }
        OutputFile::at(path, force, inputs)
    }

    /// [`OutputFile::check`] for an output of the format `ext` names ([`OutputFile::takes`]):
    /// a regular file named otherwise is refused with the sentence `wrong` gives
    /// ([`OutputError::Format`]), also where it exists and `force` was not given (the name
    /// is the mistake to say first: `--force` would not mend it).
    pub fn check_format(
        path: &Path,
        force: bool,
        inputs: &[&Path],
        ext: &str,
        wrong: impl FnOnce() -> String,
    ) -> Result<OutputFile, OutputError> {
        let named = |p: &Path| p.extension().is_some_and(|e| e.eq_ignore_ascii_case(ext));
        // `.wav` alone is a hidden file's name with no extension: said as such, since
        // "name it with .wav" would read as a contradiction.
        let wrong = || {
            let hidden = path.file_name().is_some_and(|n| {
                n.to_str()
                    .and_then(|n| n.strip_prefix('.'))
                    .is_some_and(|n| n.eq_ignore_ascii_case(ext))
            });
            match hidden {
                true => format!(
                    "{}: a name of .{ext} alone is a hidden file's name without an extension; give the file a name before .{ext} (out.{ext})",
                    path.display()
                ),
                false => wrong(),
            }
        };
        match OutputFile::check(path, force, inputs) {
            Ok(out) if out.takes(ext) => Ok(out),
            Ok(_) => Err(OutputError::Format(wrong())),
            // Only a regular file exists without --force.
            Err(OutputError::Exists(_)) if !named(path) => Err(OutputError::Format(wrong())),
            Err(e) => Err(e),
        }
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the output is a named pipe or a character device, written directly.
    pub fn is_stream(&self) -> bool {
        self.dest.is_stream()
    }

    /// Whether the output takes content of the format `ext` names: a stream takes any, a file
    /// must be named `.ext` (any case).
    pub fn takes(&self, ext: &str) -> bool {
        self.is_stream()
            || self
                .path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case(ext))
    }

    /// A new temporary file for this output, created empty now and registered
    /// ([`Temp::create`]), removed unless [`OutputFile::commit`] gives it its name. Its
    /// writer opens it with [`open_truncated`].
    pub fn temp(&self) -> Result<Temp, OutputError> {
        let (tmp, _file) = Temp::create(temp_path(&self.path)?, &self.path)
            .map_err(|e| write_error(&self.path, e))?;
        Ok(tmp)
    }

    /// Gives the finished temporary file its name (a rename, or a copy into a pipe or a
    /// device).
    pub fn commit(&self, tmp: Temp) -> Result<(), OutputError> {
        let res = match &self.dest {
            // Nothing stood there when the output was checked: a file that appeared since
            // (another render to the same name) is not replaced without --force.
            Destination::New(p) => commit_new(tmp.path(), p, &self.path),
            _ => commit(tmp.path(), &self.path),
        };
        tmp.keep();
        res
    }

    /// Writes `bytes` ([`write_atomic`]); where nothing stood when the output was checked, a
    /// file that appeared since is not replaced ([`OutputFile::commit`]'s rule).
    pub fn write(&self, bytes: &[u8]) -> Result<(), OutputError> {
        let Destination::New(dest) = &self.dest else {
            return write_atomic(&self.path, bytes);
        };
        let tmp = staged(&self.path, bytes)?;
        let res = commit_new(tmp.path(), dest, &self.path);
        tmp.keep();
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder whose name, or path, is too long to be made is refused before any run: its
    /// name alone, a name within it, and a path past the kernel's limit.
    #[test]
    fn a_folder_too_long_to_be_made_is_said() {
        let dir = std::env::temp_dir().join(format!("fugue-long-names-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let long = "a".repeat(300);
        let e = folder_can_be_made(&dir.join(&long)).unwrap_err();
        assert!(
            e.contains("its name is 300 bytes long, more than the 255"),
            "{e}"
        );
        let e = folder_can_be_made(&dir.join(&long).join("report")).unwrap_err();
        assert!(
            e.contains(&format!("the name {long} is 300 bytes long")),
            "{e}"
        );
        let deep: PathBuf = (0..20).map(|_| "b".repeat(250)).collect();
        let e = folder_can_be_made(&dir.join(deep)).unwrap_err();
        assert!(
            e.contains("its path is") && e.contains("more than the 4095"),
            "{e}"
        );
        assert!(folder_can_be_made(&dir.join("a".repeat(255))).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A file that appeared under a new output's name while the command ran is not replaced by
    /// [`OutputFile::write`] (nor is a temporary file left); without it, the output is written.
    #[test]
    fn a_write_does_not_replace_a_file_that_appeared() {
        let dir = std::env::temp_dir().join(format!("fugue-appeared-write-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.svg");
        let out = OutputFile::check(&path, false, &[]).unwrap();
        std::fs::write(&path, "theirs").unwrap();
        assert!(matches!(out.write(b"ours"), Err(OutputError::Appeared(_))));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "theirs");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_file(&path).unwrap();
        OutputFile::check(&path, false, &[])
            .unwrap()
            .write(b"ours")
            .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "ours");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// [`commit_all`] names every file in order and forgets their temporary names; while it
    /// runs it holds the list that [`remove_temps`] takes (a stop waits for its end); a
    /// rename that fails ends it, the files after removed.
    #[test]
    fn a_sequence_is_named_in_one_step() {
        let dir = std::env::temp_dir().join(format!("fugue-commit-all-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let make = |names: &[&str]| -> Vec<(Temp, PathBuf)> {
            names
                .iter()
                .map(|n| {
                    let (tmp, mut f) =
                        Temp::create(temp_name_in(&dir), Path::new("frames")).unwrap();
                    f.write_all(n.as_bytes()).unwrap();
                    (tmp, dir.join(n))
                })
                .collect()
        };
        let frames = make(&["a.png", "b.png", "c.png"]);
        let temps_of = |v: &[(Temp, PathBuf)]| -> Vec<PathBuf> {
            v.iter().map(|(t, _)| t.path().to_path_buf()).collect()
        };
        let staged = temps_of(&frames);
        commit_all(frames).unwrap();
        for n in ["a.png", "b.png", "c.png"] {
            assert_eq!(std::fs::read_to_string(dir.join(n)).unwrap(), n);
        }
        assert!(staged.iter().all(|p| !p.exists()));
        assert!(temps().files.iter().all(|r| !staged.contains(&r.path)));
        // The second's destination is a folder: its rename fails, the third is removed.
        std::fs::create_dir(dir.join("e.png")).unwrap();
        let frames = make(&["d.png", "e.png", "f.png"]);
        let staged = temps_of(&frames);
        assert!(commit_all(frames).is_err());
        assert_eq!(std::fs::read_to_string(dir.join("d.png")).unwrap(), "d.png");
        assert!(!dir.join("f.png").exists());
        assert!(staged.iter().all(|p| !p.exists()));
        assert!(temps().files.iter().all(|r| !staged.contains(&r.path)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The files of a [`Together`] get their names only when it is committed; dropped, it
    /// leaves what stood there before and no temporary file.
    #[test]
    fn files_written_together_appear_together() {
        let dir = std::env::temp_dir().join(format!("fugue-together-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.csv"), dir.join("b.md"));
        std::fs::write(&a, "old a").unwrap();
        let names = |d: &Path| {
            let mut v: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        {
            let t = Together::open();
            write_atomic(&a, b"new a").unwrap();
            // A nested set is part of the outer one.
            let inner = Together::open();
            write_atomic(&b, b"new b").unwrap();
            inner.commit().unwrap();
            assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
            assert!(!b.exists());
            drop(t);
        }
        assert_eq!(names(&dir), ["a.csv"]);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        // A removal waits for the set too: dropped, the file stays.
        let c = dir.join("c.svg");
        std::fs::write(&c, "old c").unwrap();
        drop((Together::open(), remove_with_set(&c)));
        assert!(c.exists());
        let t = Together::open();
        write_atomic(&a, b"new a").unwrap();
        remove_with_set(&c);
        write_atomic(&b, b"new b").unwrap();
        assert!(!b.exists() && c.exists());
        t.commit().unwrap();
        assert!(!c.exists());
        assert_eq!(names(&dir), ["a.csv", "b.md"]);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");
        // Without a set, a file gets its name at once.
        write_atomic(&b, b"at once").unwrap();
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "at once");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A temporary file is never made through what stands at its name (a link another user
    /// put in a shared folder), and its names cannot be foreseen.
    #[test]
    fn a_temporary_file_is_new_and_its_name_unforeseeable() {
        let dir = std::env::temp_dir().join(format!("fugue-new-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim.txt");
        std::fs::write(&victim, b"precious").unwrap();
        let link = dir.join(".fugue-1-2.part");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = Temp::create(link.clone(), &dir.join("o.wav")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(std::fs::symlink_metadata(&link).is_ok());
        // Private while it is written.
        let (t, _f) = Temp::create(temp_path_in(&dir), &dir.join("o.wav")).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(t.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        drop(t);
        // Two names in a row share no counter that another could count on.
        let (a, b) = (temp_path_in(&dir), temp_path_in(&dir));
        assert_ne!(a, b);
        let n = |p: &Path| -> u64 {
            let f = p.file_name().unwrap().to_str().unwrap();
            let rest = f
                .strip_prefix(&format!(".fugue-{}-", std::process::id()))
                .unwrap();
            rest.strip_suffix(".part").unwrap().parse().unwrap()
        };
        assert!(n(&a).abs_diff(n(&b)) > 1, "{a:?} {b:?}");
        assert_eq!(
            owner(a.file_name().unwrap().to_str().unwrap(), ""),
            Some(std::process::id() as i32)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A registered temporary file is written over from its start, and once removed (as on
    /// a signal) it is not made again; a path that is not one is created.
    #[test]
    fn a_registered_temporary_file_is_never_created_again() {
        let dir = std::env::temp_dir().join(format!("fugue-open-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (tmp, mut f) = Temp::create(dir.join("t.part"), &dir.join("t.wav")).unwrap();
        f.write_all(b"written before").unwrap();
        drop(f);
        open_truncated(tmp.path())
            .unwrap()
            .write_all(b"new")
            .unwrap();
        assert_eq!(std::fs::read(tmp.path()).unwrap(), b"new");
        std::fs::remove_file(tmp.path()).unwrap();
        assert!(open_truncated(tmp.path()).is_err());
        assert!(!tmp.path().exists());
        let other = dir.join("other.wav");
        open_truncated(&other).unwrap();
        assert!(other.exists());
        drop(tmp);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temporary_names_are_short_and_recognised() {
        let long = "x".repeat(250) + ".wav";
        let tmp = temp_path(&std::env::temp_dir().join(&long)).unwrap();
        let file = tmp.file_name().unwrap().to_string_lossy().into_owned();
        assert!(file.len() < 40, "{file}");
        assert_eq!(owner(&file, &long), Some(std::process::id() as i32));
        assert_eq!(owner(".fugue-12-3.part.svg", "a"), Some(12));
        assert_eq!(owner(".out.wav.77.part", "out.wav"), Some(77));
        assert_eq!(owner(".other.wav.77.part", "out.wav"), None);
        assert_eq!(owner("out.wav", "out.wav"), None);
    }

    #[test]
    fn what_stands_at_a_path() {
        let d = std::env::temp_dir().join(format!("fugue-dest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let file = d.join("f.txt");
        assert_eq!(destination(&file).unwrap(), Destination::New(file.clone()));
        std::fs::write(&file, "x").unwrap();
        assert!(matches!(destination(&file).unwrap(), Destination::File(_)));
        assert!(destination(Path::new("/dev/null")).unwrap().is_stream());
        let e = destination(&d).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let link = d.join("dangling");
        std::os::unix::fs::symlink(d.join("nowhere"), &link).unwrap();
        let e = destination(&link).unwrap_err().to_string();
        assert!(e.contains("does not exist"), "{e}");
        let good = d.join("good");
        std::os::unix::fs::symlink(&file, &good).unwrap();
        write_atomic(&good, b"y").unwrap();
        assert!(std::fs::symlink_metadata(&good)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&file).unwrap(), b"y");
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A file where the path needs a folder is named as such, not as an OS error.
    #[test]
    fn a_file_in_place_of_a_folder_is_named() {
        let dir = std::env::temp_dir().join(format!("fugue-notdir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("afile");
        std::fs::write(&file, b"x").unwrap();
        let e = destination(&file.join("sub").join("x.wav"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains(&format!("{} is a file, not a folder", file.display())),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod appeared {
    use super::*;

    /// An output checked where nothing stood is not given its name over a file that another
    /// process wrote there meanwhile; with --force (a file stood there when checked, and may
    /// be replaced) it is.
    #[test]
    fn a_file_that_appears_meanwhile_is_not_replaced() {
        let dir = std::env::temp_dir().join(format!("fugue-appeared-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.wav");
        let out = OutputFile::check(&path, false, &[]).unwrap();
        let tmp = out.temp().unwrap();
        std::fs::write(tmp.path(), b"ours").unwrap();
        std::fs::write(&path, b"theirs").unwrap();
        let tmp_path = tmp.path().to_path_buf();
        let e = out.commit(tmp).unwrap_err();
        assert!(matches!(e, OutputError::Appeared(_)), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"theirs");
        assert!(!tmp_path.exists(), "the temporary file is left");
        // Where nothing appears, the output is written.
        std::fs::remove_file(&path).unwrap();
        let out = OutputFile::check(&path, false, &[]).unwrap();
        let tmp = out.temp().unwrap();
        std::fs::write(tmp.path(), b"ours").unwrap();
        out.commit(tmp).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"ours");
        // With --force over a file that stood there, it is replaced.
        let out = OutputFile::check(&path, true, &[]).unwrap();
        let tmp = out.temp().unwrap();
        std::fs::write(tmp.path(), b"again").unwrap();
        out.commit(tmp).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"again");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The files `graph` (read from `path`) makes its nodes read: each `file` attribute (a Faust
/// program), from the graph's folder. An output is never one of them, as it is never the
/// graph file itself.
pub fn graph_files(path: &Path, graph: &fugue_graph::TaskGraph) -> Vec<PathBuf> {
    let folder = path.parent().unwrap_or(Path::new(""));
    graph
        .nodes()
        .iter()
        .filter_map(|n| n.attr("file"))
        .map(|f| folder.join(f.as_str().as_ref()))
        .collect()
}
