//! The ring benchmark: items per second through the ordered ring (spin, yield, park) against
//! the mutex/condvar ring with the same API and against peer queues (crossbeam `ArrayQueue`,
//! `rtrb`, `std::sync::mpsc::sync_channel`), every item checked ([`point`]); one
//! configuration repeated ([`run`]), or the whole grid written as a folder ([`sweep`]).

mod plot;
pub mod point;
pub mod producers;
pub mod sweep;

pub use point::{run_point, run_producer, Impl, Outcome, Point, ProducerCommand, ProducerConfig};

use crate::error::{config, BenchError};
use crate::stats::{median, Spread};

/// One configuration, measured `repeat` times.
#[derive(Clone, Debug)]
pub struct RingConfig {
    /// The configuration.
    pub point: Point,
    /// Measurements (the result is their median and spread).
    pub repeat: usize,
}

/// The result of [`run`].
#[derive(Clone, Debug)]
pub struct RingResult {
    /// The configuration.
    pub point: Point,
    /// Measurements.
    pub repeat: usize,
    /// Items per second: median, min and max over the measurements.
    pub rate: Spread,
    /// The median of the consumer's times, in seconds.
    pub seconds: f64,
    /// Whether every measurement transferred all its items (the point's time cap,
    /// [`Point::cap`], was not reached).
    pub finished: bool,
    /// The median of the items transferred per measurement.
    pub items_done: u64,
}

/// Measures `config.point` `config.repeat` times (every item of every run checked).
pub fn run(config: &RingConfig) -> Result<RingResult, BenchError> {
    if config.repeat == 0 {
        return self::config("--repeat must be at least 1");
    }
    if let Some(cap) = config.point.cap {
        if cap.is_zero() {
            return self::config("--max-seconds must be a positive number of seconds");
        }
        if config.point.processes.is_some() {
            return self::config(
                "--max-seconds bounds producer threads; it cannot be used with --processes",
            );
        }
    }
    let mut rates = Vec::new();
    let mut seconds = Vec::new();
    let mut done = Vec::new();
    let mut finished = true;
    for _ in 0..config.repeat {
        let o = run_point(&config.point)?;
        seconds.push(o.elapsed.as_secs_f64());
        rates.push(o.rate());
        done.push(o.transferred as f64);
        finished &= o.transferred >= config.point.items;
    }
    Ok(RingResult {
        point: config.point.clone(),
        repeat: config.repeat,
        rate: Spread::of(&rates),
        seconds: median(&seconds),
        finished,
        items_done: median(&done) as u64,
    })
}

impl RingResult {
    /// The result as one JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        let pt = &self.point;
        serde_json::json!({
            "producers": pt.producers,
            "capacity": pt.capacity,
            "strategy": pt.imp.name(),
            "items": pt.items,
            "item_size": pt.item_size,
            "padding": point::padding_name(pt.padding),
            "processes": pt.processes.is_some(),
            "pin": pt.pin,
            "seconds": self.seconds,
            "items_per_sec": self.rate.median,
            "repeat": self.repeat,
            "items_per_sec_min": self.rate.min,
            "items_per_sec_max": self.rate.max,
            "verified": true,
            "finished": self.finished,
            "items_done": self.items_done,
            "max_seconds": pt.cap.map(|c| c.as_secs_f64()),
        })
    }

    /// The result as one sentence.
    pub fn sentence(&self) -> String {
        let pt = &self.point;
        if !self.finished {
            return format!(
                "{}: {} producer {}, capacity {}: did not finish {} items in {} s ({} items transferred, median of {}; {:.3e} items/s); every transferred item verified",
                pt.imp.name(),
                pt.producers,
                if pt.producers == 1 { "thread" } else { "threads" },
                pt.capacity,
                pt.items,
                pt.cap.map_or(0.0, |c| c.as_secs_f64()),
                self.items_done,
                self.repeat,
                self.rate.median,
            );
        }
        let spread = if self.repeat > 1 {
            format!(
                " (median of {}, min {:.3e}, max {:.3e})",
                self.repeat, self.rate.min, self.rate.max
            )
        } else {
            String::new()
        };
        format!(
            "{}: {} producer {}, capacity {}, {} items of {} bytes: {:.3e} items/s in {:.3}s{}; every item verified",
            pt.imp.name(),
            pt.producers,
            match (pt.processes.is_some(), pt.producers == 1) {
                (true, true) => "process",
                (true, false) => "processes",
                (false, true) => "thread",
                (false, false) => "threads",
            },
            pt.capacity,
            pt.items,
            pt.item_size,
            self.rate.median,
            self.seconds,
            spread
        )
    }
}
