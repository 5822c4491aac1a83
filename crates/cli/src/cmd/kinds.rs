//! `fugue kinds`: every node kind, its ports and attributes, from the registry's
//! descriptions (`fugue kinds --markdown` is `docs/nodes.md`).

use fugue_engine::report::kinds::{markdown, text};

/// Arguments of `fugue kinds`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print Markdown (docs/nodes.md) instead of text.
    #[arg(long)]
    pub markdown: bool,
}

/// Runs `fugue kinds`.
pub fn run(a: Args) -> anyhow::Result<()> {
    let reg = crate::util::registry();
    print!(
        "{}",
        if a.markdown {
            markdown(&reg)
        } else {
            text(&reg)
        }
    );
    Ok(())
}
