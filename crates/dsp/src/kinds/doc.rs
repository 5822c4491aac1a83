//! What each built-in kind reads and makes, as data: for `fugue kinds`, `docs/nodes.md` and
//! the warning about attributes that no kind reads. A test checks that every kind reads each
//! attribute listed here.

/// One kind's ports and attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindDoc {
    /// The kind's name (`kind: "osc"`).
    pub name: &'static str,
    /// What it does, in one line.
    pub summary: &'static str,
    /// Its input ports.
    pub inputs: &'static str,
    /// Its output ports.
    pub outputs: &'static str,
    /// Its attributes: name and meaning (with the default, or "required"). Besides these,
    /// every node may carry `kind`, `in`, `out` (port counts) and `wcet` (its cost).
    pub attributes: &'static [(&'static str, &'static str)],
}

impl KindDoc {
    /// Whether the kind reads the attribute `name` (`kind`, `in`, `out` and `wcet` are read by
    /// the graph reader for every node and are not attributes of a kind).
    pub fn reads(&self, name: &str) -> bool {
        self.attributes.iter().any(|(a, _)| *a == name)
    }

    /// The attributes' names, comma-separated.
    pub fn attribute_names(&self) -> String {
        let v: Vec<&str> = self.attributes.iter().map(|(a, _)| *a).collect();
        v.join(", ")
    }
}

const VOLUME: (&str, &str) = ("volume", "output gain (default 1.0)");

/// Every built-in kind, in name order.
pub const BUILTIN_DOCS: &[KindDoc] = &[
    KindDoc {
        name: "biquad",
        summary: "a second-order filter (Bristow-Johnson's cookbook)",
        inputs: "summed",
        outputs: "any number, each the filtered signal",
        attributes: &[
            ("type", "lowpass (default), highpass, bandpass or notch"),
            (
                "freq",
                "cut-off or centre frequency in Hz, 0 < freq < rate/2 (required)",
            ),
            ("q", "quality factor > 0 (default 0.7071)"),
            VOLUME,
        ],
    },
    KindDoc {
        name: "delay",
        summary: "a feedback delay (echo)",
        inputs: "summed",
        outputs: "any number, each volume * (dry * x + wet * delayed)",
        attributes: &[
            ("time", "delay in seconds, 0 < time <= 60 (default 0.25)"),
            ("feedback", "-1 < feedback < 1 (default 0.4)"),
            ("wet", "gain of the delayed signal (default 0.5)"),
            ("dry", "gain of the input (default 1.0)"),
            VOLUME,
        ],
    },
    KindDoc {
        name: "gain",
        summary: "a fixed gain",
        inputs: "summed",
        outputs: "any number, each the input times the gain",
        attributes: &[
            ("gain", "linear factor (default 1.0)"),
            ("db", "decibels, multiplied in (default 0)"),
            VOLUME,
        ],
    },
    KindDoc {
        name: "karplus",
        summary: "a Karplus-Strong plucked string",
        inputs: "summed, optional (an excitation added into the string)",
        outputs: "any number, each the string",
        attributes: &[
            ("freq", "pitch in Hz, 20 <= freq < rate/2 (required)"),
            (
                "decay",
                "loss per trip round the string, 0 < decay <= 1 (default 0.996)",
            ),
            (
                "period",
                "seconds between plucks, 0 plucks once (default 1.0 without input)",
            ),
            ("offset", "seconds before the first pluck (default 0)"),
            (
                "seed",
                "seed of the pluck noise (default: a hash of the node's name)",
            ),
            VOLUME,
        ],
    },
    KindDoc {
        name: "load",
        summary: "computes for its wcet each cycle (scheduling experiments with exact costs)",
        inputs: "summed",
        outputs: "any number, each the input times volume",
        attributes: &[VOLUME],
    },
    KindDoc {
        name: "mix",
        summary: "a mixer",
        inputs: "summed (any number; the corpus declares `in`)",
        outputs: "any number, each volume * the sum",
        attributes: &[VOLUME],
    },
    KindDoc {
        name: "mod",
        summary: "ring modulation by a sine",
        inputs: "summed",
        outputs: "any number, each volume * input * sin(2π(phase + n·freq/rate))",
        attributes: &[
            ("freq", "modulator frequency in Hz (required)"),
            ("phase", "initial phase in turns (default 0.0)"),
            VOLUME,
        ],
    },
    KindDoc {
        name: "noise",
        summary: "seeded white noise",
        inputs: "none",
        outputs: "any number, each the same noise in [-volume, volume)",
        attributes: &[
            ("seed", "seed (default: a hash of the node's name)"),
            VOLUME,
        ],
    },
    KindDoc {
        name: "osc",
        summary: "a sine oscillator",
        inputs: "none",
        outputs: "any number, each the sine",
        attributes: &[
            ("freq", "frequency in Hz (required)"),
            (
                "phase",
                "initial phase in turns, 0.25 starts at the crest (default 0.0)",
            ),
            VOLUME,
        ],
    },
    KindDoc {
        name: "resampler",
        summary: "changes the sample rate of everything downstream",
        inputs: "summed",
        outputs: "any number, each the converted signal at rate * ratio",
        attributes: &[
            ("ratio", "output rate / input rate, a fraction (required)"),
            ("conv", "zero_hold, linear or sinc (default sinc)"),
            VOLUME,
        ],
    },
    KindDoc {
        name: "reverb",
        summary: "a Freeverb-style reverb",
        inputs: "summed",
        outputs: "1 (mono) or 2 and more (left, right, left, ...)",
        attributes: &[
            ("room", "room size in [0, 1] (default 0.5)"),
            ("damp", "high-frequency damping in [0, 1] (default 0.5)"),
            ("wet", "reverberated gain (default 0.3)"),
            ("dry", "input gain (default 0.7)"),
            ("width", "stereo width in [0, 1] (default 1.0)"),
            VOLUME,
        ],
    },
    KindDoc {
        name: "sink",
        summary: "an output of the render: each input port is one channel",
        inputs: "each port one output channel (sinks in file order, then ports)",
        outputs: "none",
        attributes: &[VOLUME],
    },
    KindDoc {
        name: "source",
        summary: "an input of the engine: each output port is one input channel",
        inputs: "none",
        outputs: "each port one engine input channel (--input WAV, else silence)",
        attributes: &[VOLUME],
    },
];

/// The doc of the built-in kind `name`.
pub fn builtin_doc(name: &str) -> Option<&'static KindDoc> {
    BUILTIN_DOCS.iter().find(|d| d.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NodeContext, Ratio};
    use fugue_graph::{Node, Value};

    /// A value no attribute accepts.
    const BAD: &str = "not-a-value";

    fn ctx_for(node: &Node) -> NodeContext<'_> {
        let generator = matches!(node.kind.as_str(), "noise" | "osc" | "source");
        NodeContext {
            node,
            inputs: usize::from(!generator),
            outputs: usize::from(node.kind != "sink"),
            in_edges: usize::from(!generator),
            sample_rate: 48_000.0,
            block: 64,
            rate: Ratio::ONE,
            engine_rate: 48_000.0,
            engine_block: 64,
        }
    }

    /// A node of `kind` with its required attributes set to values it accepts.
    fn valid(kind: &str) -> Node {
        let mut n = Node::new("n", kind);
        match kind {
            "biquad" | "mod" | "osc" => n = n.with_attr("freq", Value::Float(440.0)),
            "karplus" => n = n.with_attr("freq", Value::Float(220.0)),
            "resampler" => n = n.with_attr("ratio", Value::Float(0.5)),
            "load" => n = n.with_cost(1.0),
            _ => {}
        }
        n
    }

    #[test]
    fn every_builtin_kind_has_a_doc_and_no_other() {
        let mut kinds: Vec<&str> = crate::kinds::BUILTIN.iter().map(|(n, _)| *n).collect();
        kinds.sort_unstable();
        let docs: Vec<&str> = BUILTIN_DOCS.iter().map(|d| d.name).collect();
        assert_eq!(kinds, docs);
    }

    #[test]
    fn every_documented_attribute_is_read_by_its_kind() {
        for doc in BUILTIN_DOCS {
            let reg = crate::Registry::with_builtin_kinds();
            let build = reg.get(doc.name).unwrap();
            let base = valid(doc.name);
            assert!(build(&ctx_for(&base)).is_ok(), "{}", doc.name);
            for (attr, _) in doc.attributes {
                // A value the kind cannot take: building fails naming the attribute, which
                // proves that the kind reads it.
                let mut n = base.clone();
                n.attrs.retain(|(k, _)| k != attr);
                n.attrs.push((attr.to_string(), Value::Str(BAD.into())));
                let e = match build(&ctx_for(&n)) {
                    Ok(_) => panic!("{}: `{attr}: {BAD}` was accepted", doc.name),
                    Err(e) => e.to_string(),
                };
                assert!(e.contains(attr), "{}: {e}", doc.name);
            }
        }
    }
}
