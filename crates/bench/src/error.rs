//! The benchmarks' error type.

use std::path::PathBuf;

/// Why a benchmark could not run, or failed its checks.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The configuration asks for something the benchmark cannot do (a usage error for the
    /// command line).
    #[error("{0}")]
    Config(String),
    /// An input file (a study's spec) holds something the benchmark cannot use: bad input,
    /// not a usage error.
    #[error("{0}")]
    Input(String),
    /// A graph file could not be read.
    #[error(transparent)]
    Read(Box<fugue_graph::ReadError>),
    /// A graph could not be compiled into a plan.
    #[error(transparent)]
    Compile(Box<fugue_exec::CompileError>),
    /// An executor could not be built.
    #[error(transparent)]
    Executor(Box<fugue_engine::BuildError>),
    /// A real-time run could not start or go on.
    #[error(transparent)]
    Run(Box<fugue_engine::RunError>),
    /// The shared-memory ring could not be created or opened.
    #[error(transparent)]
    Shm(Box<fugue_ring::shm::ShmError>),
    /// A producer of the ordered ring failed.
    #[error(transparent)]
    Acquire(Box<fugue_ring::AcquireError>),
    /// The consumer of the ordered ring failed.
    #[error(transparent)]
    Next(Box<fugue_ring::NextError>),
    /// A task pool could not be started (too many threads, none, ...).
    #[error(transparent)]
    Pool(Box<fugue_pool::BuildError>),
    /// The probe nodes found the task order broken.
    #[error(transparent)]
    Probe(Box<crate::peers::probe::ProbeError>),
    /// A file or process could not be read, written or started.
    #[error("{what}")]
    Io {
        /// What failed (names the file).
        what: String,
        /// The reason.
        #[source]
        source: std::io::Error,
    },
    /// A figure could not be drawn.
    #[error("cannot draw {path}: {message}")]
    Plot {
        /// The figure's file.
        path: PathBuf,
        /// The backend's message.
        message: String,
    },
    /// An output path names something that cannot be written as asked: a directory, a block
    /// device, a symbolic link to nothing, a folder that does not exist.
    #[error("{0}")]
    Output(String),
    /// A check failed or a measurement went wrong: its times do not count.
    #[error("{0}")]
    Failed(String),
    /// An error with what was being done when it happened.
    #[error("{context}")]
    Context {
        /// What was being done.
        context: String,
        /// The error.
        #[source]
        source: Box<BenchError>,
    },
}

/// `From` for the boxed variants (boxed: the error stays small beside the results).
macro_rules! boxed_from {
    ($($variant:ident: $ty:ty),* $(,)?) => {$(
        impl From<$ty> for BenchError {
            fn from(e: $ty) -> Self {
                BenchError::$variant(Box::new(e))
            }
        }
    )*};
}

boxed_from!(
    Read: fugue_graph::ReadError,
    Compile: fugue_exec::CompileError,
    Executor: fugue_engine::BuildError,
    Run: fugue_engine::RunError,
    Shm: fugue_ring::shm::ShmError,
    Acquire: fugue_ring::AcquireError,
    Next: fugue_ring::NextError,
    Probe: crate::peers::probe::ProbeError,
    Pool: fugue_pool::BuildError,
);

impl From<fugue_engine::output::OutputError> for BenchError {
    fn from(e: fugue_engine::output::OutputError) -> Self {
        use fugue_engine::output::OutputError;
        match e {
            OutputError::Io { what, source } => BenchError::Io { what, source },
            // A file that stands there without --force: the command line's to fix.
            e @ (OutputError::Exists(_) | OutputError::Format(_)) => {
                BenchError::Config(e.to_string())
            }
            e => BenchError::Output(e.to_string()),
        }
    }
}

impl BenchError {
    /// Whether the error comes from the configuration (the command line's usage errors):
    /// [`BenchError::Config`], or a graph file of an unknown format, also under context.
    pub fn is_config(&self) -> bool {
        match self {
            BenchError::Config(_) => true,
            BenchError::Read(e) => matches!(**e, fugue_graph::ReadError::UnknownFormat { .. }),
            BenchError::Pool(e) => !matches!(**e, fugue_pool::BuildError::Spawn { .. }),
            BenchError::Context { source, .. } => source.is_config(),
            _ => false,
        }
    }

    /// `self`, an error of building `graph`'s nodes or plan, under the context `what`
    /// followed by the place where the graph's file writes the node behind it (`cannot
    /// compile g.ag:1:13`; nothing for a generated graph or another error).
    pub(crate) fn at_node(self, what: String, graph: &fugue_graph::TaskGraph) -> BenchError {
        let at = match &self {
            BenchError::Compile(c) => fugue_engine::check::error_at(graph, &**c),
            BenchError::Executor(b) => fugue_engine::check::error_at(graph, &**b),
            _ => String::new(),
        };
        BenchError::Context {
            context: format!("{what}{at}"),
            source: Box::new(self),
        }
    }

    /// An I/O error about `what`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> BenchError {
        let mut what = what.into();
        if crate::report::is_disk_full(&source) {
            what.push_str(": the disk is full");
        }
        BenchError::Io { what, source }
    }
}

/// Adds what was being done to an error, as `anyhow::Context` does.
pub trait Context<T> {
    /// Wraps the error with `context`.
    fn context(self, context: impl Into<String>) -> Result<T, BenchError>;
    /// Wraps the error with the context `f` makes (only on error).
    fn with_context<S: Into<String>>(self, f: impl FnOnce() -> S) -> Result<T, BenchError>;
}

impl<T, E: Into<BenchError>> Context<T> for Result<T, E> {
    fn context(self, context: impl Into<String>) -> Result<T, BenchError> {
        self.with_context(|| context)
    }
    fn with_context<S: Into<String>>(self, f: impl FnOnce() -> S) -> Result<T, BenchError> {
        self.map_err(|e| BenchError::Context {
            context: f().into(),
            source: Box::new(e.into()),
        })
    }
}

/// Returns `Err(BenchError::Config(msg))`.
pub(crate) fn config<T>(msg: impl Into<String>) -> Result<T, BenchError> {
    Err(BenchError::Config(msg.into()))
}

/// Returns `Err(BenchError::Failed(msg))`.
pub(crate) fn failed<T>(msg: impl Into<String>) -> Result<T, BenchError> {
    Err(BenchError::Failed(msg.into()))
}
