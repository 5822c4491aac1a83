//! The LV2 URIs fugue reads or provides.

/// `lv2:AudioPort`.
pub const AUDIO_PORT: &str = "http://lv2plug.in/ns/lv2core#AudioPort";
/// `lv2:ControlPort`.
pub const CONTROL_PORT: &str = "http://lv2plug.in/ns/lv2core#ControlPort";
/// `lv2:CVPort`.
pub const CV_PORT: &str = "http://lv2plug.in/ns/lv2core#CVPort";
/// `lv2:InputPort`.
pub const INPUT_PORT: &str = "http://lv2plug.in/ns/lv2core#InputPort";
/// `lv2:connectionOptional`.
pub const CONNECTION_OPTIONAL: &str = "http://lv2plug.in/ns/lv2core#connectionOptional";
/// `lv2:sampleRate` (a port property: the range is a fraction of the rate).
pub const SAMPLE_RATE: &str = "http://lv2plug.in/ns/lv2core#sampleRate";
/// `lv2:integer`: a control that takes whole numbers.
pub const INTEGER: &str = "http://lv2plug.in/ns/lv2core#integer";
/// `lv2:toggled`: a control that is off (its minimum, or 0) or on (its maximum, or 1).
pub const TOGGLED: &str = "http://lv2plug.in/ns/lv2core#toggled";
/// `lv2:hardRTCapable`.
pub const HARD_RT: &str = "http://lv2plug.in/ns/lv2core#hardRTCapable";
/// `lv2:inPlaceBroken` (fugue never connects an input and an output to one buffer).
pub const IN_PLACE_BROKEN: &str = "http://lv2plug.in/ns/lv2core#inPlaceBroken";
/// `lv2:isLive`.
pub const IS_LIVE: &str = "http://lv2plug.in/ns/lv2core#isLive";
/// `atom:AtomPort`.
pub const ATOM_PORT: &str = "http://lv2plug.in/ns/ext/atom#AtomPort";
/// `atom:Sequence`.
pub const ATOM_SEQUENCE: &str = "http://lv2plug.in/ns/ext/atom#Sequence";
/// `atom:Chunk`.
pub const ATOM_CHUNK: &str = "http://lv2plug.in/ns/ext/atom#Chunk";
/// `atom:Int`.
pub const ATOM_INT: &str = "http://lv2plug.in/ns/ext/atom#Int";
/// `atom:Float`.
pub const ATOM_FLOAT: &str = "http://lv2plug.in/ns/ext/atom#Float";
/// `urid:map`.
pub const URID_MAP: &str = "http://lv2plug.in/ns/ext/urid#map";
/// `urid:unmap`.
pub const URID_UNMAP: &str = "http://lv2plug.in/ns/ext/urid#unmap";
/// `opts:options`.
pub const OPTIONS: &str = "http://lv2plug.in/ns/ext/options#options";
/// `bufsz:boundedBlockLength`.
pub const BOUNDED_BLOCK: &str = "http://lv2plug.in/ns/ext/buf-size#boundedBlockLength";
/// `bufsz:maxBlockLength`.
pub const MAX_BLOCK: &str = "http://lv2plug.in/ns/ext/buf-size#maxBlockLength";
/// `bufsz:minBlockLength`.
pub const MIN_BLOCK: &str = "http://lv2plug.in/ns/ext/buf-size#minBlockLength";
/// `bufsz:nominalBlockLength`.
pub const NOMINAL_BLOCK: &str = "http://lv2plug.in/ns/ext/buf-size#nominalBlockLength";
/// `param:sampleRate`.
pub const PARAM_SAMPLE_RATE: &str = "http://lv2plug.in/ns/ext/parameters#sampleRate";
/// `opts:requiredOption`: an option the host must pass at instantiation.
pub const REQUIRED_OPTION: &str = "http://lv2plug.in/ns/ext/options#requiredOption";
/// `lv2:port`.
pub const PORT: &str = "http://lv2plug.in/ns/lv2core#port";
/// `lv2:index`.
pub const INDEX: &str = "http://lv2plug.in/ns/lv2core#index";
/// `lv2:symbol`: a port's symbol (a C identifier).
pub const SYMBOL: &str = "http://lv2plug.in/ns/lv2core#symbol";
/// The options fugue passes at instantiation (`options:options`).
pub const OPTIONS_PASSED: &[&str] = &[MIN_BLOCK, MAX_BLOCK, NOMINAL_BLOCK, PARAM_SAMPLE_RATE];

/// The features a plugin may require and fugue provides (or, for properties of the plugin
/// itself that some plugins list as required features, satisfies).
pub const PROVIDED: &[&str] = &[
    URID_MAP,
    URID_UNMAP,
    OPTIONS,
    BOUNDED_BLOCK,
    HARD_RT,
    IN_PLACE_BROKEN,
    IS_LIVE,
];

/// What a feature that fugue does not provide is, in words, for the refusal.
pub fn describe(feature: &str) -> &'static str {
    let tail = feature.rsplit(['#', '/']).next().unwrap_or(feature);
    if feature.contains("/worker") {
        "a worker thread"
    } else if feature.contains("/state") {
        "saved state"
    } else if feature.contains("/ui") || feature.contains("instance-access") {
        "a plugin GUI"
    } else if feature.contains("/log") {
        "a log"
    } else if feature.contains("/data-access") {
        "a GUI's access to the plugin's data"
    } else if tail == "fixedBlockLength" || tail == "powerOf2BlockLength" {
        "a block length the engine does not promise"
    } else {
        "a host feature"
    }
}
