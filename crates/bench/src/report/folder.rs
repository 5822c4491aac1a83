//! A results folder: made ready once (a path that is not a folder refused, the files of an
//! earlier run kept unless `--force`), then written file by file, each file atomically.

use std::path::{Path, PathBuf};

use super::plot::{self, Figure};
use super::{write_atomic, Csv};
use crate::error::{config, BenchError};

/// What of an existing folder a run refuses to replace without `--force`.
#[derive(Clone, Copy, Debug)]
pub enum Existing<'a> {
    /// Any of these files.
    Files(&'a [&'a str]),
    /// Anything: the folder must be empty.
    Anything,
}

/// Removes the figure `name` (`NAME.svg` and `NAME.png`) from `dir` where those are
/// regular files: a figure an earlier run wrote that this one has no part for (the folder's
/// files are being replaced).
pub fn remove_figure(dir: &Path, name: &str) {
    for ext in ["svg", "png"] {
        // With the run's set of files, when they are written as one
        // ([`fugue_engine::output::Together`]): a run that fails leaves the earlier set whole.
        fugue_engine::output::remove_with_set(&dir.join(format!("{name}.{ext}")));
    }
}

/// Writes a run's files into `dir` with `write`, as one set
/// ([`fugue_engine::output::Together`]): a failure midway leaves the folder's earlier files
/// as they were, and takes away the folder when this call found none and it is left empty.
pub fn as_one_set<T>(
    dir: &Path,
    write: impl FnOnce() -> Result<T, BenchError>,
) -> Result<T, BenchError> {
    let made = !dir.exists();
    let together = fugue_engine::output::Together::open();
    let res = write().and_then(|r| Ok(together.commit().map(|()| r)?));
    if res.is_err() && made {
        // Only succeeds if the folder is empty.
        let _ = std::fs::remove_dir(dir);
    }
    res
}

/// Checks that a run may write into `dir`: refuses (a configuration error) a path that
/// stands and is not a folder, and what `existing` names when it is there and not `force`.
pub fn check(dir: &Path, existing: Existing<'_>, force: bool) -> Result<(), BenchError> {
    if dir == Path::new("-") {
        return config(
            "-o -: the results are a folder of files, not a stream; name a folder".to_string(),
        );
    }
    if dir.exists() && !dir.is_dir() {
        return config(format!("{} exists and is not a folder", dir.display()));
    }
    // Said before the run, not after it: its results would be lost.
    if let Err(why) = fugue_engine::output::folder_can_be_made(dir) {
        return config(why);
    }
    // Permissions do not tell everything (a file system such as /proc refuses a new folder
    // whatever they say): a folder that is not there is made once now, then taken away again.
    if !dir.exists() {
        Folder::open(dir)?.remove_if_created();
    }
    // A folder where a result file goes would stop the run at its end, --force or not.
    if let Existing::Files(files) = existing {
        if let Some(p) = files_of(files).map(|f| dir.join(f)).find(|p| p.is_dir()) {
            return config(format!(
                "{} is a folder, where the results write a file; move it away or choose another output folder",
                p.display()
            ));
        }
    }
    if force {
        return Ok(());
    }
    refuse(dir, existing)
}

/// The files `files` names: each, and a figure's `.png` beside its `.svg` (naming one names
/// both).
fn files_of<'a>(files: &'a [&'a str]) -> impl Iterator<Item = String> + 'a {
    let png = |f: &&str| f.strip_suffix(".svg").map(|stem| format!("{stem}.png"));
    files
        .iter()
        .map(|f| f.to_string())
        .chain(files.iter().filter_map(png))
}

/// Refuses what `existing` names in `dir` when it is there.
pub(super) fn refuse(dir: &Path, existing: Existing<'_>) -> Result<(), BenchError> {
    match existing {
        Existing::Files(files) => {
            for f in files_of(files) {
                let p = dir.join(f);
                if p.exists() {
                    return config(format!(
                        "{} already exists; pass --force to overwrite it",
                        p.display()
                    ));
                }
            }
        }
        Existing::Anything => {
            // A dead run's temporary file (killed while it wrote) is not the user's: a folder
            // holding only such files is taken as empty.
            let holds = |mut d: std::fs::ReadDir| {
                d.any(|e| e.map_or(true, |e| !fugue_engine::output::is_dead_temp(&e.path())))
            };
            if std::fs::read_dir(dir).is_ok_and(holds) {
                return config(format!(
                    "{} already exists and is not empty; pass --force to replace its files",
                    dir.display()
                ));
            }
        }
    }
    Ok(())
}

/// A results folder.
#[derive(Clone, Debug)]
pub struct Folder {
    path: PathBuf,
    /// The folders [`Folder::open`] made, its parents that were not there first, down to it
    /// (so that a failed run can take them away again); empty when it was there.
    made: Vec<PathBuf>,
}

impl Folder {
    /// [`check`]s `dir`, then opens it ([`Folder::open`]).
    pub fn create(dir: &Path, existing: Existing<'_>, force: bool) -> Result<Folder, BenchError> {
        check(dir, existing, force)?;
        Folder::open(dir)
    }

    /// The folder `dir`, created (with its parents) when it is not there, without the
    /// refusals of [`check`] (for a folder checked before the run that fills it).
    pub fn open(dir: &Path) -> Result<Folder, BenchError> {
        let mut made: Vec<PathBuf> = dir
            .ancestors()
            .filter(|a| !a.as_os_str().is_empty())
            .take_while(|a| !a.exists())
            .map(Path::to_path_buf)
            .collect();
        made.reverse();
        let folder = Folder {
            path: dir.to_path_buf(),
            made,
        };
        if let Err(e) = super::create_dir(dir) {
            // The parents made before the failure are taken away again.
            folder.remove_if_created();
            return Err(e);
        }
        Ok(folder)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of the file `name` in it.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Writes `text` as the file `name`.
    pub fn text(&self, name: &str, text: &str) -> Result<(), BenchError> {
        write_atomic(&self.join(name), text.as_bytes())
    }

    /// Writes `csv` as the file `name`.
    pub fn csv(&self, name: &str, csv: &Csv) -> Result<(), BenchError> {
        csv.write(&self.join(name))
    }

    /// Draws `figure` as `NAME.svg` and `NAME.png` at `size` pixels.
    pub fn figure(
        &self,
        name: &str,
        size: (u32, u32),
        figure: &impl Figure,
    ) -> Result<(), BenchError> {
        for ext in ["svg", "png"] {
            plot::write(&self.join(&format!("{name}.{ext}")), size, figure)?;
        }
        Ok(())
    }

    /// Takes the folder away again when [`Folder::open`] made it and it is still empty (after
    /// a run that failed before writing anything).
    pub fn remove_if_created(&self) {
        // Only succeeds if the folder is empty; then its parents made with it, the deepest
        // first, each while it is empty.
        for dir in self.made.iter().rev() {
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }

    /// The folder, taken away when the value is dropped if [`Folder::open`] made it and
    /// nothing was written into it: a run that fails or is stopped anywhere leaves no empty
    /// folder behind ([`Folder::remove_if_created`]); one that wrote its files keeps it.
    pub fn until_written(self) -> UntilWritten {
        // A signal that ends the process at once takes it away too: the parents registered
        // first, as a signal takes away the last registered first.
        for dir in &self.made {
            fugue_engine::output::register_empty_dir(dir);
        }
        UntilWritten(self)
    }
}

/// A [`Folder`] that is taken away when dropped empty ([`Folder::until_written`]).
#[derive(Debug)]
pub struct UntilWritten(Folder);

impl Drop for UntilWritten {
    fn drop(&mut self) {
        self.0.remove_if_created();
        for dir in &self.0.made {
            fugue_engine::output::forget_path(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-o -` names no folder (it made a folder named `-`).
    #[test]
    fn a_dash_is_no_results_folder() {
        let e = check(Path::new("-"), Existing::Anything, true).unwrap_err();
        assert!(
            e.is_config() && e.to_string().contains("-o -: the results are a folder"),
            "{e}"
        );
    }

    /// A folder the file system refuses to make is said by the check, before the run that
    /// would fill it (it was said after `bench table` and `bench host` had run); a folder that
    /// can be made is left as it was, not there.
    #[test]
    fn a_folder_that_cannot_be_made_is_refused_before_the_run() {
        let e = check(
            Path::new("/proc/fugue-no-such/out"),
            Existing::Anything,
            true,
        )
        .unwrap_err();
        assert!(e.to_string().contains("/proc/fugue-no-such"), "{e}");
        let dir = std::env::temp_dir().join(format!("fugue-folder-made-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        check(&dir.join("a/b"), Existing::Anything, false).unwrap();
        assert!(!dir.exists(), "the check left {} behind", dir.display());
    }

    #[test]
    fn existing_files_are_kept_unless_forced() {
        let dir = std::env::temp_dir().join(format!("fugue-folder-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let f = Folder::create(&dir, Existing::Files(&["a.csv"]), false).unwrap();
        assert_eq!(f.made, std::slice::from_ref(&dir), "it made the folder");
        f.text("a.csv", "x\n").unwrap();
        let e = check(&dir, Existing::Files(&["a.csv"]), false).unwrap_err();
        assert!(
            e.to_string().contains("already exists; pass --force"),
            "{e}"
        );
        let e = check(&dir, Existing::Anything, false).unwrap_err();
        assert!(e.to_string().contains("is not empty"), "{e}");
        check(&dir, Existing::Anything, true).unwrap();
        check(&dir, Existing::Files(&["b.csv"]), false).unwrap();
        // A figure's `.png` is refused with its `.svg`.
        std::fs::write(dir.join("f.png"), "x").unwrap();
        let e = check(&dir, Existing::Files(&["f.svg"]), false).unwrap_err();
        assert!(e.to_string().contains("f.png already exists"), "{e}");
        let e = check(&dir.join("a.csv"), Existing::Anything, true).unwrap_err();
        assert!(e.to_string().contains("is not a folder"), "{e}");
        assert!(Folder::open(&dir).unwrap().made.is_empty());
        // A folder where a result file goes is refused before the run, --force or not (a
        // figure's `.png` too).
        std::fs::create_dir(dir.join("README.md")).unwrap();
        std::fs::create_dir(dir.join("g.png")).unwrap();
        for (files, name) in [(&["README.md"][..], "README.md"), (&["g.svg"][..], "g.png")] {
            for force in [false, true] {
                let e = check(&dir, Existing::Files(files), force).unwrap_err();
                assert!(
                    e.is_config() && e.to_string().contains(&format!("{name} is a folder")),
                    "{e}"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A run killed while it wrote leaves its temporary file: a rerun without `--force` is
    /// not refused for it, where a live writer's file, or any other, still counts.
    #[test]
    fn a_dead_runs_temporary_file_is_no_content() {
        let dir = std::env::temp_dir().join(format!("fugue-folder-dead-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        std::fs::write(dir.join(format!(".fugue-{dead}-123.part")), "x").unwrap();
        check(&dir, Existing::Anything, false).unwrap();
        let live = dir.join(format!(".fugue-{}-7.part", std::process::id()));
        std::fs::write(&live, "x").unwrap();
        let e = check(&dir, Existing::Anything, false).unwrap_err();
        assert!(e.to_string().contains("is not empty"), "{e}");
        std::fs::remove_file(&live).unwrap();
        std::fs::write(dir.join(".fugue-notes"), "x").unwrap();
        assert!(check(&dir, Existing::Anything, false).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
