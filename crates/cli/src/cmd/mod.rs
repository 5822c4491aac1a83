//! One module per command.

pub mod bench;
pub mod calibrate;
pub mod check;
pub mod completions;
pub mod dot;
pub mod gen;
pub mod host;
pub mod info;
pub mod kinds;
pub mod plugins;
pub mod profile;
pub mod render;
pub mod run;
pub mod schedule;
