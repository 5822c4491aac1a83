//! The shared-memory ring: header checks, and producer processes (this test binary re-run
//! with a role in `FUGUE_RING_ROLE`) exchanging items with the consumer (this process),
//! including a producer that dies mid-write.
#![cfg(not(loom))]

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use fugue_ring::shm::{self, Expect, ShmError};
use fugue_ring::{AcquireError, NextError, Options, Padding, Strategy};

const ROLE: &str = "FUGUE_RING_ROLE";

fn name(tag: &str) -> String {
    format!("fugue-ring-test-{}-{tag}", std::process::id())
}

fn fill(buf: &mut [u8], n: u64) {
    buf[..8].copy_from_slice(&n.to_le_bytes());
    for (j, b) in buf[8..].iter_mut().enumerate() {
        *b = (n as u8) ^ (j as u8);
    }
}

fn check(buf: &[u8], n: u64) {
    assert_eq!(u64::from_le_bytes(buf[..8].try_into().unwrap()), n);
    for (j, b) in buf[8..].iter().enumerate() {
        assert_eq!(*b, (n as u8) ^ (j as u8), "item {n} byte {}", j + 8);
    }
}

/// Entry point of the producer processes; skipped in a normal run.
#[test]
#[ignore = "entry point of the child processes of the cross-process tests"]
fn child_producer() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let args: Vec<&str> = role.split(' ').collect();
    let ring = args[0];
    let producers: u64 = args[1].parse().unwrap();
    let k: u64 = args[2].parse().unwrap();
    let items: u64 = args[3].parse().unwrap();
    let die_at: Option<u64> = args.get(4).map(|s| s.parse().unwrap());
    let p = shm::open_expect(
        ring,
        Expect {
            capacity: None,
            item_size: Some(32),
        },
    )
    .unwrap();
    let mut n = k;
    while n < items {
        match p.acquire_timeout(n, Duration::from_secs(60)) {
            Ok(mut g) => {
                fill(&mut g, n);
                if Some(n) == die_at {
                    // Die between acquire and commit.
                    std::process::exit(3);
                }
                g.commit();
            }
            Err(AcquireError::Disconnected { .. }) => std::process::exit(0),
            Err(e) => panic!("producer {k}: {e}"),
        }
        n += producers;
    }
}

fn spawn(role: String) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_producer",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(ROLE, role)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn cross_process(producers: u64, items: u64, strategy: Strategy) {
    let ring = name(&format!("x{producers}-{items}-{strategy:?}"));
    let options = Options {
        strategy,
        padding: Padding::CacheLine,
    };
    let mut c = shm::create_with(&ring, 64, 32, options).unwrap();
    assert!(c.is_shared_memory());
    let children: Vec<Child> = (0..producers)
        .map(|k| spawn(format!("{ring} {producers} {k} {items}")))
        .collect();
    for n in 0..items {
        let item = c
            .next_timeout(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("{strategy:?}: {e}"));
        assert_eq!(item.number(), n);
        check(&item, n);
    }
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
}

#[test]
fn two_producer_processes_100k_items() {
    cross_process(2, 100_000, Strategy::Yield);
    cross_process(2, 20_000, Strategy::Park);
}

#[test]
fn three_producer_processes_100k_items() {
    cross_process(3, 100_000, Strategy::Yield);
    cross_process(3, 20_000, Strategy::Park);
}

#[test]
#[ignore = "a million items through processes; scripts/long-tests.sh runs it"]
fn producer_processes_a_million_items() {
    cross_process(2, 1_000_000, Strategy::Yield);
    cross_process(3, 1_000_000, Strategy::Yield);
    cross_process(3, 1_000_000, Strategy::Park);
}

#[test]
fn a_producer_dying_mid_write_gives_a_timeout_naming_the_item() {
    let ring = name("die");
    let mut c = shm::create(&ring, 16, 32).unwrap();
    let items = 10_000u64;
    let mut dying = spawn(format!("{ring} 2 0 {items} 1000"));
    let mut other = spawn(format!("{ring} 2 1 {items}"));
    for n in 0..1000 {
        let item = c.next_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!(item.number(), n);
        check(&item, n);
    }
    assert_eq!(dying.wait().unwrap().code(), Some(3));
    let start = Instant::now();
    let e = c.next_timeout(Duration::from_millis(500)).err().unwrap();
    assert!(start.elapsed() >= Duration::from_millis(500));
    assert_eq!(
        e,
        NextError::Timeout {
            missing: 1000,
            waited: Duration::from_millis(500)
        }
    );
    assert_eq!(e.to_string(), "item 1000 did not arrive within 500ms");
    // The consumer goes away: the other producer sees it and exits cleanly.
    drop(c);
    assert!(other.wait().unwrap().success());
    // The name is gone.
    assert!(matches!(shm::open(&ring), Err(ShmError::NotFound { .. })));
}

#[test]
fn header_is_checked_on_open() {
    let ring = name("hdr");
    let _c = shm::create(&ring, 8, 32).unwrap();
    assert!(matches!(
        shm::create(&ring, 8, 32),
        Err(ShmError::Exists { .. })
    ));
    let p = shm::open(&ring).unwrap();
    assert_eq!((p.capacity(), p.item_size()), (8, 32));
    assert!(matches!(
        shm::open_expect(
            &ring,
            Expect {
                capacity: None,
                item_size: Some(64)
            }
        ),
        Err(ShmError::ItemSizeMismatch {
            found: 32,
            expected: 64,
            ..
        })
    ));
    assert!(matches!(
        shm::open_expect(
            &ring,
            Expect {
                capacity: Some(4),
                item_size: Some(32)
            }
        ),
        Err(ShmError::CapacityMismatch {
            found: 8,
            expected: 4,
            ..
        })
    ));
    assert!(matches!(
        shm::open(&name("absent")),
        Err(ShmError::NotFound { .. })
    ));
    assert!(matches!(shm::open("a/b"), Err(ShmError::BadName { .. })));
    assert!(matches!(
        shm::create("", 1, 1),
        Err(ShmError::BadName { .. })
    ));
    assert!(matches!(
        shm::create(&name("zero"), 0, 1),
        Err(ShmError::BadGeometry { .. })
    ));

    // Change the version field (offset 8) of a live ring.
    let (map, _file) = map_raw(&ring);
    let mut map = map;
    map[8..12].copy_from_slice(&7u32.to_le_bytes());
    let e = shm::open(&ring).err().unwrap();
    assert!(
        matches!(
            e,
            ShmError::VersionMismatch {
                found: 7,
                expected: shm::VERSION,
                ..
            }
        ),
        "{e}"
    );
    map[8..12].copy_from_slice(&shm::VERSION.to_le_bytes());
    // Corrupt the stride (offset 56).
    map[56..64].copy_from_slice(&3u64.to_le_bytes());
    assert!(matches!(shm::open(&ring), Err(ShmError::Corrupt { .. })));
}

#[test]
fn foreign_objects_are_rejected() {
    use nix::fcntl::OFlag;
    use nix::sys::mman::{shm_open, shm_unlink};
    use nix::sys::stat::Mode;
    let foreign = name("foreign");
    let path = format!("/{foreign}");
    let fd = shm_open(
        path.as_str(),
        OFlag::O_CREAT | OFlag::O_RDWR,
        Mode::S_IRUSR | Mode::S_IWUSR,
    )
    .unwrap();
    nix::unistd::ftruncate(&fd, 4096).unwrap();
    let file = std::fs::File::from(fd);
    // SAFETY: a private test object nobody else maps.
    let mut map = unsafe { memmap2::MmapMut::map_mut(&file) }.unwrap();
    // All zero: not initialised.
    assert!(matches!(
        shm::open(&foreign),
        Err(ShmError::NotReady { .. })
    ));
    map[..8].copy_from_slice(b"NOTARING");
    let e = shm::open(&foreign).err().unwrap();
    assert!(matches!(e, ShmError::BadMagic { .. }), "{e}");
    assert!(e.to_string().contains("is not a fugue ring"));
    drop(map);
    nix::unistd::ftruncate(&file, 16).unwrap();
    assert!(matches!(
        shm::open(&foreign),
        Err(ShmError::TooSmall { len: 16, .. })
    ));
    shm_unlink(path.as_str()).unwrap();
    assert!(matches!(
        shm::unlink(&foreign),
        Err(ShmError::NotFound { .. })
    ));
}

fn map_raw(ring: &str) -> (memmap2::MmapMut, std::fs::File) {
    use nix::fcntl::OFlag;
    use nix::sys::mman::shm_open;
    use nix::sys::stat::Mode;
    let fd = shm_open(format!("/{ring}").as_str(), OFlag::O_RDWR, Mode::empty()).unwrap();
    let file = std::fs::File::from(fd);
    // SAFETY: the test only pokes header fields while no other process opens the ring.
    let map = unsafe { memmap2::MmapMut::map_mut(&file) }.unwrap();
    (map, file)
}
