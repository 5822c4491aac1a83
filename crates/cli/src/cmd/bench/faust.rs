//! `fugue bench faust`: Faust's scalar, `-vec`, `-vec -sch` and `-vec -omp` builds of a
//! program against fugue on a graph of the same music ([`fugue_bench::faust`]).

use std::path::{Path, PathBuf};

use fugue_bench::faust::{default_programs, FaustBenchConfig, Program};

use crate::util::usage;

/// Arguments of `fugue bench faust`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Programs, comma-separated: karplus32 (32 strings), mixer (8 channel strips)
    /// [default: both, unless --dsp is given].
    #[arg(long, value_delimiter = ',', value_parser = ["karplus32", "mixer"])]
    pub programs: Option<Vec<String>>,
    /// Another Faust program to measure, against the fugue graph --graph.
    #[arg(long, requires = "graph")]
    pub dsp: Option<PathBuf>,
    /// The fugue graph of the same music as --dsp.
    #[arg(long, requires = "dsp")]
    pub graph: Option<PathBuf>,
    /// A parameter of --dsp's Faust builds, NAME=VALUE (repeatable), so that they play what
    /// the graph plays.
    #[arg(long = "param", requires = "dsp")]
    pub params: Vec<String>,
    /// Thread counts of the parallel contenders, comma-separated [default: 1 to the cores].
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: Option<Vec<u64>>,
    /// Seconds of audio of each run.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Frames per block.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=8192))]
    pub block: u64,
    /// Sample rate in Hz.
    #[arg(long, default_value_t = 48_000, value_parser = clap::value_parser!(u32).range(8_000..=384_000))]
    pub rate: u32,
    /// Runs of every contender (the tables give medians and ranges).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub runs: u64,
    /// The largest difference allowed between a Faust mode's samples and its scalar build's.
    #[arg(long, default_value_t = 1e-5)]
    pub tolerance: f64,
    /// Faust's examples folder (where karplus32 and mixer are).
    #[arg(long, default_value = "/usr/share/faust/examples")]
    pub faust_examples: PathBuf,
    /// Output folder.
    #[arg(short, long, default_value = "faust-bench")]
    pub output: PathBuf,
    /// Replace the files of an existing output folder.
    #[arg(long)]
    pub force: bool,
}

/// fugue's `examples` folder: in the current folder, else in the source tree this binary was
/// built from.
fn examples() -> Option<PathBuf> {
    let here = PathBuf::from("examples");
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    [here, built]
        .into_iter()
        .find(|p| p.join("faust/karplus32/karplus32.ag").is_file())
}

/// Runs `fugue bench faust`.
pub fn run(a: Args) -> anyhow::Result<()> {
    if !(a.seconds.is_finite() && a.seconds > 0.0 && a.seconds <= 600.0) {
        return Err(usage(format!(
            "--seconds must be above 0 and at most 600, not {}",
            a.seconds
        )));
    }
    if !(a.tolerance.is_finite() && a.tolerance >= 0.0) {
        return Err(usage(format!(
            "--tolerance must be a number of at least 0, not {}",
            a.tolerance
        )));
    }
    for tool in ["faust", "g++"] {
        if fugue_bench::machine::command_output(tool, &["--version"]).is_none() {
            anyhow::bail!(
                "`fugue bench faust` needs `{tool}` on the PATH (Debian: apt install faust g++)"
            );
        }
    }
    let mut programs = Vec::new();
    if a.dsp.is_none() || a.programs.is_some() {
        let names = a
            .programs
            .clone()
            .unwrap_or_else(|| vec!["karplus32".into(), "mixer".into()]);
        let examples = examples().ok_or_else(|| {
            usage("fugue's examples folder (examples/faust/karplus32) is not in the current folder; run from fugue's source tree, or give --dsp and --graph")
        })?;
        for p in default_programs(&a.faust_examples, &examples) {
            if names.contains(&p.name) {
                if !p.dsp.is_file() {
                    anyhow::bail!(
                        "{}: no such Faust program (Debian's faust package installs it; --faust-examples names another folder)",
                        p.dsp.display()
                    );
                }
                programs.push(p);
            }
        }
    }
    if let (Some(dsp), Some(graph)) = (&a.dsp, &a.graph) {
        for f in [dsp, graph] {
            if !f.is_file() {
                anyhow::bail!("{}: no such file", f.display());
            }
        }
        if let Some(bad) = a.params.iter().find(|p| !p.contains('=')) {
            return Err(usage(format!("--param {bad}: expected NAME=VALUE")));
        }
        programs.push(Program {
            name: dsp
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "program".into()),
            dsp: dsp.clone(),
            graph: graph.clone(),
            params: a.params.clone(),
        });
    }
    let cores = fugue_exec::placement::available_cores().max(1);
    let work = std::env::temp_dir().join(format!("fugue-bench-faust-{}", std::process::id()));
    let config = FaustBenchConfig {
        fugue: std::env::current_exe()?,
        programs,
        threads: match &a.threads {
            Some(t) => t.iter().map(|&t| t as usize).collect(),
            None => (1..=cores).collect(),
        },
        seconds: a.seconds,
        block: a.block as usize,
        rate: a.rate,
        runs: a.runs as usize,
        tolerance: a.tolerance,
        work: work.clone(),
    };
    fugue_bench::report::refuse_existing(
        &a.output,
        &[
            "README.md",
            "raw.csv",
            "summary.csv",
            "speedup.svg",
            "speedup.png",
        ],
        a.force,
    )?;
    let result = fugue_bench::faust::run(&config, &mut |line| eprintln!("{line}"));
    let _ = std::fs::remove_dir_all(&work);
    let bench = result?;
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    fugue_bench::faust::write(&a.output, &config, &bench, &command, a.force)?;
    for line in fugue_bench::faust::findings(&bench, config.tolerance) {
        println!("{line}");
    }
    println!("wrote {}", a.output.display());
    Ok(())
}
