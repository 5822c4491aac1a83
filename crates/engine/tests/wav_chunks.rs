//! WAV inputs with chunks before their samples: RIFF pads a chunk of odd size with one byte,
//! which the reader honours (a `LIST` or `junk` chunk of odd size, as some editors write);
//! a chunk whose size is absurd is refused in one sentence, without reading it.

/// A mono 16-bit WAV file at 48 kHz of `samples`, with `extra` chunks (id, body) between
/// `fmt ` and `data`, each padded to an even length as RIFF asks.
fn wav(samples: &[i16], extra: &[(&[u8; 4], &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(b"WAVE");
    body.extend_from_slice(b"fmt ");
    body.extend_from_slice(&16u32.to_le_bytes());
    body.extend_from_slice(&1u16.to_le_bytes()); // PCM
    body.extend_from_slice(&1u16.to_le_bytes()); // mono
    body.extend_from_slice(&48_000u32.to_le_bytes());
    body.extend_from_slice(&96_000u32.to_le_bytes());
    body.extend_from_slice(&2u16.to_le_bytes());
    body.extend_from_slice(&16u16.to_le_bytes());
    for (id, data) in extra {
        body.extend_from_slice(*id);
        body.extend_from_slice(&(data.len() as u32).to_le_bytes());
        body.extend_from_slice(data);
        if data.len() % 2 == 1 {
            body.push(0);
        }
    }
    body.extend_from_slice(b"data");
    body.extend_from_slice(&((samples.len() * 2) as u32).to_le_bytes());
    for s in samples {
        body.extend_from_slice(&s.to_le_bytes());
    }
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

#[test]
fn chunks_of_odd_size_before_the_samples_are_read_past() {
    let samples: Vec<i16> = (0..480).map(|i| (i * 37 % 2000) as i16 - 1000).collect();
    let plain = fugue_engine::read_wav(&wav(&samples, &[])[..], 48_000).unwrap();
    for extra in [
        vec![(b"junk", &b"12345"[..])],
        vec![
            (b"LIST", &b"INFOISFT\x03\x00\x00\x00ab\x00"[..]),
            (b"junk", &b"x"[..]),
        ],
        vec![(b"junk", &b"1234"[..])],
    ] {
        let got = fugue_engine::read_wav(&wav(&samples, &extra)[..], 48_000).unwrap();
        assert_eq!(got, plain, "{extra:?}");
    }
}

#[test]
fn a_chunk_of_absurd_size_is_refused_without_reading_it() {
    let mut bytes = wav(&[0; 16], &[(b"junk", &b"12"[..])]);
    // The junk chunk's size field, after RIFF(12) and fmt (24).
    bytes[40..44].copy_from_slice(&0xFFFF_FF00u32.to_le_bytes());
    let e = match fugue_engine::read_wav(&bytes[..], 48_000) {
        Err(fugue_engine::WavInputError::Other(e)) => e,
        other => panic!("{other:?}"),
    };
    assert!(
        e.contains("chunk `junk`") && e.contains("4294967040 bytes"),
        "{e}"
    );
}
