//! `fugue completions SHELL` and `fugue man`: generated from the same clap definitions as the
//! commands themselves (clap_complete, clap_mangen), so they cannot fall out of date.

use std::path::PathBuf;

use anyhow::Context as _;

/// Arguments of `fugue completions`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The shell.
    pub shell: clap_complete::Shell,
}

/// Arguments of `fugue man`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write fugue.1 and one page per command (fugue-render.1, fugue-bench-study.1, ...) into
    /// this folder instead of printing fugue.1.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Overwrite pages that exist in --dir.
    #[arg(long)]
    pub force: bool,
}

/// Prints the completion script of `cmd` for the shell.
pub fn completions(a: Args, mut cmd: clap::Command) -> anyhow::Result<()> {
    let name = cmd.get_name().to_string();
    // Generated into memory first: clap_complete panics on a write error.
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, name, &mut out);
    crate::stdio::write_stdout(&out);
    Ok(())
}

/// Prints the man page of `cmd`, or writes one per command into `--dir`.
pub fn man(a: ManArgs, cmd: clap::Command) -> anyhow::Result<()> {
    let Some(dir) = a.dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        crate::stdio::write_stdout(&out);
        return Ok(());
    };
    if !dir.is_dir() {
        let what = if dir.exists() {
            "is not a folder"
        } else {
            "no such folder"
        };
        return Err(crate::util::usage(format!(
            "--dir {}: {what}",
            dir.display()
        )));
    }
    let mut pages = Vec::new();
    collect(&cmd.clone(), "", &mut pages);
    // Every page rendered and every file checked before any is written: a refusal (a page
    // already there without --force) leaves the folder as it was.
    let mut files = Vec::with_capacity(pages.len());
    for (name, page) in &pages {
        let path = dir.join(format!("{name}.1"));
        let mut out = Vec::new();
        clap_mangen::Man::new(page.clone())
            .title(name.to_uppercase())
            .render(&mut out)
            .with_context(|| format!("cannot render the man page {name}"))?;
        files.push((
            fugue_engine::output::OutputFile::check(&path, a.force, &[])?,
            out,
        ));
    }
    for (file, out) in files {
        file.write(&out)?;
    }
    println!("wrote {} man pages into {}", pages.len(), dir.display());
    Ok(())
}

/// Every visible command under `cmd`, named `fugue`, `fugue-render`, `fugue-bench-study`...
fn collect(cmd: &clap::Command, prefix: &str, out: &mut Vec<(String, clap::Command)>) {
    let name = if prefix.is_empty() {
        cmd.get_name().to_string()
    } else {
        format!("{prefix}-{}", cmd.get_name())
    };
    let mut page = cmd.clone().bin_name(name.replace('-', " "));
    page.build();
    out.push((name.clone(), page));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, &name, out);
    }
}
