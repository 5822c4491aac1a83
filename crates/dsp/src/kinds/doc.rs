//! What each built-in kind reads and makes, as data: for `fugue kinds`, `docs/nodes.md` and
//! the warning about attributes that no kind reads. A test checks that every kind reads each
//! attribute listed here.

use std::borrow::Cow;

/// A text of a description: borrowed for the built-in kinds, owned for a kind described at
/// run time (a Faust program's parameters, an LV2 plugin's ports).
pub type Text = Cow<'static, str>;

/// `s` as a [`Text`], in constant tables.
pub const fn text(s: &'static str) -> Text {
    Cow::Borrowed(s)
}

/// One kind's ports and attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindDoc {
    /// The kind's name (`kind: "osc"`).
    pub name: Text,
    /// What it does, in one line.
    pub summary: Text,
    /// Its input ports.
    pub inputs: Text,
    /// Its output ports.
    pub outputs: Text,
    /// Its attributes: name and meaning (with the default, or "required"). Besides these,
    /// every node may carry `kind`, `in`, `out` (port counts) and `wcet` (its cost).
    pub attributes: Cow<'static, [(Text, Text)]>,
    /// What any other attribute does, for a kind whose attributes depend on what a node
    /// loads (a Faust program's parameters, an LV2 plugin's controls): such a kind checks
    /// them itself, and no attribute of it is reported as unread. `None`: the kind reads only
    /// [`KindDoc::attributes`].
    pub others: Option<Text>,
    /// The attributes that can change while the node plays (`set GRAPH NODE ATTR VALUE` in
    /// the host), in the order of the processor's parameter indices.
    pub live: Cow<'static, [Text]>,
}

impl KindDoc {
    /// A description built at run time, with no attributes yet (add them with
    /// [`KindDoc::attribute`]).
    pub fn new(
        name: impl Into<Text>,
        summary: impl Into<Text>,
        inputs: impl Into<Text>,
        outputs: impl Into<Text>,
    ) -> KindDoc {
        KindDoc {
            name: name.into(),
            summary: summary.into(),
            inputs: inputs.into(),
            outputs: outputs.into(),
            attributes: Cow::Borrowed(&[]),
            others: None,
            live: Cow::Borrowed(&[]),
        }
    }

    /// This description with `names` live (see [`KindDoc::live`]).
    pub fn live(mut self, names: &[&'static str]) -> KindDoc {
        self.live = names.iter().map(|&n| text(n)).collect::<Vec<_>>().into();
        self
    }

    /// Whether attribute `name` is live.
    pub fn is_live(&self, name: &str) -> bool {
        self.live.iter().any(|a| *a == name)
    }

    /// This description with every attribute not listed meaning `meaning` (see
    /// [`KindDoc::others`]).
    pub fn others(mut self, meaning: impl Into<Text>) -> KindDoc {
        self.others = Some(meaning.into());
        self
    }

    /// This description with the attribute `name` added, meaning `meaning`.
    pub fn attribute(mut self, name: impl Into<Text>, meaning: impl Into<Text>) -> KindDoc {
        self.attributes.to_mut().push((name.into(), meaning.into()));
        self
    }

    /// Whether the kind reads the attribute `name`: one it lists, or any when it has
    /// [`KindDoc::others`] (`kind`, `in`, `out` and `wcet` are read by
    /// the graph reader for every node and are not attributes of a kind).
    pub fn reads(&self, name: &str) -> bool {
        self.others.is_some() || self.attributes.iter().any(|(a, _)| *a == name)
    }

    /// The attributes' names, comma-separated.
    pub fn attribute_names(&self) -> String {
        let v: Vec<&str> = self.attributes.iter().map(|(a, _)| a.as_ref()).collect();
        v.join(", ")
    }
}

const VOLUME: (Text, Text) = (
    text("volume"),
    text("output gain, within ±10000 (default 1.0)"),
);

/// Every built-in kind, in name order.
pub const BUILTIN_DOCS: &[KindDoc] = &[
    KindDoc {
        name: text("biquad"),
        summary: text("a second-order filter (Bristow-Johnson's cookbook)"),
        inputs: text("summed"),
        outputs: text("any number, each the filtered signal"),
        attributes: Cow::Borrowed(&[
            (
                text("type"),
                text("lowpass (default), highpass, bandpass or notch"),
            ),
            (
                text("freq"),
                text("cut-off or centre frequency in Hz, 0 < freq < rate/2 (required)"),
            ),
            (text("q"), text("quality factor > 0 (default 0.7071)")),
            VOLUME,
        ]),
        others: None,
        live: Cow::Borrowed(&[text("freq"), text("q"), text("volume")]),
    },
    KindDoc {
        name: text("delay"),
        summary: text("a feedback delay (echo)"),
        inputs: text("summed"),
        outputs: text("any number, each volume * (dry * x + wet * delayed)"),
        attributes: Cow::Borrowed(&[
            (
                text("time"),
                text("delay in seconds, 0 < time <= max_time (default 0.25)"),
            ),
            (
                text("max_time"),
                text("the longest time a live change may set, time <= max_time <= 60 (default: time, at least 1)"),
            ),
            (text("feedback"), text("-1 < feedback < 1 (default 0.4)")),
            (
                text("wet"),
                text("gain of the delayed signal, within ±10000 (default 0.5)"),
            ),
            (text("dry"), text("gain of the input, within ±10000 (default 1.0)")),
            VOLUME,
        ]),
        others: None,
        live: Cow::Borrowed(&[
            text("feedback"),
            text("wet"),
            text("dry"),
            text("volume"),
            text("time"),
        ]),
    },
    KindDoc {
        name: text("gain"),
        summary: text("a fixed gain"),
        inputs: text("summed"),
        outputs: text("any number, each the input times the gain"),
        attributes: Cow::Borrowed(&[
            (text("gain"), text("linear factor, within ±10000 (default 1.0)")),
            (text("db"), text("decibels, at most 80, multiplied in (default 0)")),
            VOLUME,
        ]),
        others: None,
        live: Cow::Borrowed(&[text("gain"), text("db"), text("volume")]),
    },
    KindDoc {
        name: text("karplus"),
        summary: text("a Karplus-Strong plucked string"),
        inputs: text("summed, optional (an excitation added into the string)"),
        outputs: text("any number, each the string"),
        attributes: Cow::Borrowed(&[
            (
                text("freq"),
                text("pitch in Hz, 20 <= freq < rate/2 (required)"),
            ),
            (
                text("decay"),
                text("loss per trip round the string, 0 < decay <= 1 (default 0.996)"),
            ),
            (
                text("period"),
                text("seconds between plucks, 0 plucks once (default 1.0 without input)"),
            ),
            (
                text("offset"),
                text("seconds before the first pluck (default 0)"),
            ),
            (
                text("seed"),
                text("seed of the pluck noise, a whole number from 0 to 2^53 (default: a hash of the node's name)"),
            ),
            VOLUME,
        ]),
        others: None,
        live: Cow::Borrowed(&[text("decay"), text("volume")]),
    },
    KindDoc {
        name: text("load"),
        summary: text("computes for its wcet each cycle, from 0 to 1000000 µs (scheduling experiments with exact costs)"),
        inputs: text("summed"),
        outputs: text("any number, each the input times volume"),
        attributes: Cow::Borrowed(&[VOLUME]),
        others: None,
        live: Cow::Borrowed(&[]),
    },
    KindDoc {
        name: text("mix"),
        summary: text("a mixer"),
        inputs: text("summed (any number; the corpus declares `in`)"),
        outputs: text("any number, each volume * the sum"),
        attributes: Cow::Borrowed(&[VOLUME]),
        others: None,
        live: Cow::Borrowed(&[text("volume")]),
    },
    KindDoc {
        name: text("mod"),
        summary: text("ring modulation by a sine"),
        inputs: text("summed"),
        outputs: text("any number, each volume * input * sin(2π(phase + n·freq/rate))"),
        attributes: Cow::Borrowed(&[
            (
                text("freq"),
                text("modulator frequency in Hz, within ±1e9 (required)"),
            ),
            (text("phase"), text("initial phase in turns (default 0.0)")),
            VOLUME,
        ]),
        others: None,
        live: Cow::Borrowed(&[text("freq"), text("volume")]),
    },
    KindDoc {
        name: text("noise"),
        summary: text("seeded white noise"),
        inputs: text("none"),
        outputs: text("any number, each the same noise in [-volume, volume)"),
        attributes: Cow::Borrowed(&[
            (
                text("seed"),
                text("seed, a whole number from 0 to 2^53 (default: a hash of the node's name)"),
            ),
            VOLUME,
        ]),
        others: None,
        live: Cow::Borrowed(&[text("volume")]),
    },
    KindDoc {
        name: text("osc"),
        summary: text("a sine oscillator"),
        inputs: text("none"),
        outputs: text("any number, each the sine"),
        attributes: Cow::Borrowed(&[
            (
                text("freq"),
                text("frequency in Hz, within ±1e9; negative or above half the rate, it aliases (required)"),
            ),
            (
                text("phase"),
                text("initial phase in turns, 0.25 starts at the crest (default 0.0)"),
            ),
            VOLUME,
        ]),
        others: None,
        live: Cow::Borrowed(&[text("freq"), text("volume")]),
    },
    KindDoc {
        name: text("resampler"),
        summary: text("changes the sample rate of everything downstream"),
        inputs: text("summed"),
        outputs: text("any number, each the converted signal at rate * ratio"),
        attributes: Cow::Borrowed(&[
            (
                text("ratio"),
                text("output rate / input rate, a fraction: a number or \"N/D\" (required)"),
            ),
            (
                text("conv"),
                text("zero_hold, linear or sinc (default sinc)"),
            ),
            VOLUME,
        ]),
        others: None,
        live: Cow::Borrowed(&[]),
    },
    KindDoc {
        name: text("reverb"),
        summary: text("a Freeverb-style reverb"),
        inputs: text("summed"),
        outputs: text("1 (mono) or 2 and more (left, right, left, ...)"),
        attributes: Cow::Borrowed(&[
            (text("room"), text("room size in [0, 1] (default 0.5)")),
            (
                text("damp"),
                text("high-frequency damping in [0, 1] (default 0.5)"),
            ),
            (text("wet"), text("reverberated gain, within ±10000 (default 0.3)")),
            (text("dry"), text("input gain, within ±10000 (default 0.7)")),
            (text("width"), text("stereo width in [0, 1] (default 1.0)")),
            VOLUME,
        ]),
        others: None,
        live: Cow::Borrowed(&[
            text("room"),
            text("damp"),
            text("wet"),
            text("dry"),
            text("width"),
            text("volume"),
        ]),
    },
    KindDoc {
        name: text("sink"),
        summary: text("an output of the render: each input port is one channel"),
        inputs: text("each port one output channel (sinks in file order, then ports)"),
        outputs: text("none"),
        attributes: Cow::Borrowed(&[VOLUME]),
        others: None,
        live: Cow::Borrowed(&[]),
    },
    KindDoc {
        name: text("source"),
        summary: text("an input of the engine: each output port is one input channel"),
        inputs: text("none"),
        outputs: text("each port one engine input channel (--input WAV, else silence)"),
        attributes: Cow::Borrowed(&[VOLUME]),
        others: None,
        live: Cow::Borrowed(&[]),
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
            folder: None,
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
        let docs: Vec<&str> = BUILTIN_DOCS.iter().map(|d| d.name.as_ref()).collect();
        assert_eq!(kinds, docs);
    }

    #[test]
    fn every_documented_attribute_is_read_by_its_kind() {
        for doc in BUILTIN_DOCS {
            let reg = crate::Registry::with_builtin_kinds();
            let build = reg.get(&doc.name).unwrap();
            let base = valid(&doc.name);
            assert!(build(&ctx_for(&base)).is_ok(), "{}", doc.name);
            for (attr, _) in doc.attributes.iter() {
                // A value the kind cannot take: building fails naming the attribute, which
                // proves that the kind reads it.
                let mut n = base.clone();
                n.attrs.retain(|(k, _)| k != attr.as_ref());
                n.attrs.push((attr.to_string(), Value::Str(BAD.into())));
                let e = match build(&ctx_for(&n)) {
                    Ok(_) => panic!("{}: `{attr}: {BAD}` was accepted", doc.name),
                    Err(e) => e.to_string(),
                };
                assert!(e.contains(attr.as_ref()), "{}: {e}", doc.name);
            }
        }
    }
}
