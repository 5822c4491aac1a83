//! One module per command.

pub mod dot;
pub mod gen;
pub mod info;
pub mod schedule;
pub mod render;
