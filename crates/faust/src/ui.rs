//! A DSP's parameters, as its `buildUserInterface` describes them: one [`Param`] per
//! button, check box, slider, numeric entry or bar graph, with the path of the groups it is in
//! and the address of its zone in one instance.

use std::ffi::{c_char, c_void, CStr};

use crate::ffi::UiGlue;

/// What kind of widget a parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Widget {
    /// A button (1 while pressed).
    Button,
    /// A check box (0 or 1).
    CheckBox,
    /// A slider or a numeric entry: an input with a range.
    Slider,
    /// A bar graph: an output the program writes (read-only).
    Bargraph,
}

/// One parameter of a DSP.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its label.
    pub label: String,
    /// Its path: the labels of its groups and its own, each after a `/` (`/karplus/gain`).
    pub path: String,
    /// The widget.
    pub widget: Widget,
    /// Initial value.
    pub init: f32,
    /// Smallest value.
    pub min: f32,
    /// Largest value.
    pub max: f32,
}

impl Param {
    /// Whether the attribute `name` names this parameter: its label, its path, or the end of
    /// its path after a `/` (`excitation/gain`).
    pub fn is_named(&self, name: &str) -> bool {
        let name = name.trim_start_matches('/');
        self.label == name
            || self.path.trim_start_matches('/') == name
            || self
                .path
                .strip_suffix(name)
                .is_some_and(|head| head.ends_with('/'))
    }

    /// Whether a program reads it (not a bar graph).
    pub fn is_input(&self) -> bool {
        self.widget != Widget::Bargraph
    }
}

/// What a walk of the user interface collects: the parameters and their zones, in the order
/// `buildUserInterface` gives them (the same for every instance of one factory).
#[derive(Default)]
pub struct Collected {
    groups: Vec<String>,
    /// The parameters.
    pub params: Vec<Param>,
    /// Each parameter's zone in the instance walked.
    pub zones: Vec<*mut f32>,
    /// The program's sound files (`soundfile("label[url:...]", n)`), by label, which fugue
    /// does not load (they play silence).
    pub soundfiles: Vec<String>,
}

/// The text of a C string, or "" for a null pointer.
///
/// # Safety
/// `p` is null or a NUL-terminated string valid for the call.
unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null and NUL-terminated (the caller's contract).
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The collector behind `ui`.
///
/// # Safety
/// `ui` is the `ui` field of the glue made by [`walk`], which points to a live [`Collected`]
/// that nothing else borrows during the walk.
unsafe fn collected<'a>(ui: *mut c_void) -> &'a mut Collected {
    // SAFETY: the caller's contract.
    unsafe { &mut *ui.cast::<Collected>() }
}

unsafe extern "C" fn open_box(ui: *mut c_void, label: *const c_char) {
    // SAFETY: libfaust calls back with the glue's `ui` and a label string.
    let (c, label) = unsafe { (collected(ui), text(label)) };
    c.groups.push(label);
}

unsafe extern "C" fn close_box(ui: *mut c_void) {
    // SAFETY: libfaust calls back with the glue's `ui`.
    unsafe { collected(ui) }.groups.pop();
}

/// Records one parameter.
///
/// # Safety
/// As [`collected`] and [`text`].
unsafe fn add(ui: *mut c_void, label: *const c_char, zone: *mut f32, p: (Widget, f32, f32, f32)) {
    // SAFETY: the caller's contract.
    let (c, label) = unsafe { (collected(ui), text(label)) };
    let mut path = String::new();
    for g in c.groups.iter().filter(|g| !g.is_empty()) {
        path.push('/');
        path.push_str(g);
    }
    path.push('/');
    path.push_str(&label);
    c.params.push(Param {
        label,
        path,
        widget: p.0,
        init: p.1,
        min: p.2,
        max: p.3,
    });
    c.zones.push(zone);
}

unsafe extern "C" fn add_button(ui: *mut c_void, label: *const c_char, zone: *mut f32) {
    // SAFETY: libfaust calls back with the glue's `ui`, a label and the widget's zone.
    unsafe { add(ui, label, zone, (Widget::Button, 0.0, 0.0, 1.0)) }
}

unsafe extern "C" fn add_check(ui: *mut c_void, label: *const c_char, zone: *mut f32) {
    // SAFETY: as `add_button`.
    unsafe { add(ui, label, zone, (Widget::CheckBox, 0.0, 0.0, 1.0)) }
}

unsafe extern "C" fn add_slider(
    ui: *mut c_void,
    label: *const c_char,
    zone: *mut f32,
    init: f32,
    min: f32,
    max: f32,
    _step: f32,
) {
    // SAFETY: as `add_button`.
    unsafe { add(ui, label, zone, (Widget::Slider, init, min, max)) }
}

unsafe extern "C" fn add_bargraph(
    ui: *mut c_void,
    label: *const c_char,
    zone: *mut f32,
    min: f32,
    max: f32,
) {
    // SAFETY: as `add_button`.
    unsafe { add(ui, label, zone, (Widget::Bargraph, min, min, max)) }
}

unsafe extern "C" fn add_soundfile(
    ui: *mut c_void,
    label: *const c_char,
    _url: *const c_char,
    _zone: *mut c_void,
) {
    // SAFETY: libfaust calls back with the glue's `ui` and a label string.
    let (c, label) = unsafe { (collected(ui), text(label)) };
    c.soundfiles.push(label);
}

unsafe extern "C" fn declare(
    _ui: *mut c_void,
    _zone: *mut f32,
    _key: *const c_char,
    _value: *const c_char,
) {
}

/// Walks the user interface of one instance with `build_ui` (the backend's
/// `buildUserInterface`).
///
/// # Safety
/// `build_ui` is the backend's `buildUserInterface` and `dsp` a live instance of it.
pub unsafe fn walk(
    build_ui: unsafe extern "C" fn(*mut c_void, *mut UiGlue),
    dsp: *mut c_void,
) -> Collected {
    let mut c = Collected::default();
    let mut glue = UiGlue {
        ui: (&mut c as *mut Collected).cast(),
        open_tab_box: open_box,
        open_horizontal_box: open_box,
        open_vertical_box: open_box,
        close_box,
        add_button,
        add_check_button: add_check,
        add_vertical_slider: add_slider,
        add_horizontal_slider: add_slider,
        add_num_entry: add_slider,
        add_horizontal_bargraph: add_bargraph,
        add_vertical_bargraph: add_bargraph,
        add_soundfile,
        declare,
    };
    // SAFETY: the caller's contract for `build_ui` and `dsp`; the glue and the collector it
    // points to outlive the call, and only the callbacks touch the collector meanwhile.
    unsafe { build_ui(dsp, &mut glue) };
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_is_named_by_its_label_its_path_or_the_end_of_its_path() {
        let p = Param {
            label: "gain".into(),
            path: "/karplus/excitation/gain".into(),
            widget: Widget::Slider,
            init: 0.5,
            min: 0.0,
            max: 1.0,
        };
        for yes in [
            "gain",
            "/karplus/excitation/gain",
            "karplus/excitation/gain",
            "excitation/gain",
        ] {
            assert!(p.is_named(yes), "{yes}");
        }
        for no in ["gai", "tion/gain", "/excitation", "level"] {
            assert!(!p.is_named(no), "{no}");
        }
    }
}
