//! `fugue plugins`: the installed LV2 plugins that an `lv2` node can name, with their audio
//! ports and controls, as `fugue kinds` lists the built-in kinds.

use fugue_lv2::PluginInfo;

/// Arguments of `fugue plugins`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only the plugins whose URI, name or class contains this text (case-insensitive).
    pub filter: Option<String>,
    /// Print one JSON array of the plugins (URI, name, class, ports with their ranges and
    /// defaults, required and optional features) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `fugue plugins`.
pub fn run(a: Args) -> anyhow::Result<()> {
    let all = fugue_lv2::plugins()
        .map_err(|e| anyhow::anyhow!("cannot list the LV2 plugins: fugue {e}"))?;
    if let Some(w) = fugue_lv2::world()
        .ok()
        .and_then(fugue_lv2::load_problems_line)
    {
        crate::util::warning(w);
    }
    let filter = a.filter.as_deref().map(str::to_lowercase);
    let chosen: Vec<&PluginInfo> = all
        .iter()
        .filter(|p| filter.as_deref().is_none_or(|f| p.matches(f)))
        .collect();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&chosen)?);
        return Ok(());
    }
    let matching = match &a.filter {
        Some(f) => format!(" matching `{f}` (of {})", all.len()),
        None => String::new(),
    };
    let s = if chosen.len() == 1 { "" } else { "s" };
    chosen.iter().for_each(|p| print!("{p}"));
    println!(
        "{} plugin{s}{matching}; use one as `x = {{ kind: \"lv2\", uri: \"URI\", CONTROL: VALUE, }};`",
        chosen.len()
    );
    Ok(())
}
