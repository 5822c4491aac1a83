//! The temporary files of a process that ends on a signal (`output::remove_temps`): the ones
//! created are removed, and none is created afterwards, so that a thread writing one while
//! the process ends leaves nothing behind. (A test binary of its own: the removal closes the
//! process's registry for good.)

use fugue_engine::output::{remove_temps, write_atomic, Temp};

#[test]
fn after_the_removal_no_temporary_file_is_created() {
    let dir = fugue_testkit::host::fresh_dir("temps");
    let (held, _file) = Temp::create(dir.join("a.part"), &dir.join("a.wav")).unwrap();
    assert!(held.path().is_file());
    let lost = remove_temps();
    assert_eq!(lost, [dir.join("a.wav").display().to_string()]);
    assert!(!held.path().exists(), "the file created before is removed");
    let late = Temp::create(dir.join("b.part"), &dir.join("b.wav"));
    assert_eq!(
        late.err().map(|e| e.kind()),
        Some(std::io::ErrorKind::Interrupted)
    );
    assert!(!dir.join("b.part").exists(), "none is created after");
    // An atomic write after the removal writes nothing, not even its temporary file.
    assert!(write_atomic(&dir.join("c.txt"), b"c").is_err());
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}
