//! Histogram codec: HDR histogram V2 format, with deflate ([`encode`], as result files keep
//! it) or without ([`encode_plain`], as agents send `Latency.histogram`); [`decode`] reads
//! both. Values are event latencies in microseconds at three significant digits.

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer, V2Serializer};

/// Significant digits every fleetbench histogram keeps.
pub const SIGFIG: u8 = 3;

#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("cannot encode histogram: {0}")]
    Encode(String),
    #[error("cannot decode histogram: {0}")]
    Decode(String),
}

/// A new empty latency histogram that grows as needed.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new(SIGFIG).expect("3 significant digits is a valid HDR configuration")
}

/// Serialises `h` as HDR V2 + deflate.
pub fn encode(h: &Histogram<u64>) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut out)
        .map_err(|e| CodecError::Encode(format!("{e:?}")))?;
    Ok(out)
}

/// Serialises `h` as HDR V2 without deflate, as agents send their reports (one a second at
/// least): deflate zeroes its state of hundreds of kilobytes anew for every histogram, and
/// inflate its own on the coordinator, which cost more than the rest of an interval's
/// report for a few hundred bytes saved.
pub fn encode_plain(h: &Histogram<u64>) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut out)
        .map_err(|e| CodecError::Encode(format!("{e:?}")))?;
    Ok(out)
}

/// Parses bytes made by [`encode`] or [`encode_plain`]. Empty input decodes to an empty
/// histogram. Bad input (truncated, random) is an error, never a panic.
pub fn decode(bytes: &[u8]) -> Result<Histogram<u64>, CodecError> {
    if bytes.is_empty() {
        return Ok(new_histogram());
    }
    let mut reader = bytes;
    let mut h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut reader)
        .map_err(|e| CodecError::Decode(format!("{e:?}")))?;
    if h.low() == 1 && h.sigfig() == SIGFIG {
        // Configured as ours are (lowest value 1, three digits): kept, growing as they do,
        // instead of copied into a new one.
        h.auto(true);
        return Ok(h);
    }
    let mut out = new_histogram();
    out.add(&h)
        .map_err(|e| CodecError::Decode(format!("{e:?}")))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_counts_and_percentiles() {
        let mut h = new_histogram();
        for v in 1..=10_000u64 {
            h.record(v * 7).unwrap();
        }
        let back = decode(&encode(&h).unwrap()).unwrap();
        assert_eq!(back.len(), h.len());
        for q in [0.5, 0.9, 0.95, 0.99, 0.999] {
            assert_eq!(back.value_at_quantile(q), h.value_at_quantile(q), "q={q}");
        }
        assert_eq!(back.max(), h.max());
        assert_eq!(back.min(), h.min());
    }

    #[test]
    fn plain_and_deflated_decode_alike_and_keep_growing() {
        let mut h = new_histogram();
        for v in 1..5_000u64 {
            h.record(v * v % 100_003).unwrap();
        }
        let plain = decode(&encode_plain(&h).unwrap()).unwrap();
        let deflated = decode(&encode(&h).unwrap()).unwrap();
        assert_eq!(plain, h);
        assert_eq!(deflated, h);
        for mut back in [plain, deflated] {
            // Far above anything recorded: a decoded histogram grows as a new one does.
            back.record(1 << 40).unwrap();
            let mut other = new_histogram();
            other.record(1 << 41).unwrap();
            back.add(&other).unwrap();
            assert_eq!(back.len(), h.len() + 2);
        }
    }

    #[test]
    fn empty_bytes_are_an_empty_histogram() {
        assert_eq!(decode(&[]).unwrap().len(), 0);
        let empty = new_histogram();
        assert_eq!(decode(&encode(&empty).unwrap()).unwrap().len(), 0);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut h = new_histogram();
        h.record(1234).unwrap();
        let bytes = encode(&h).unwrap();
        for cut in 0..bytes.len() {
            let _ = decode(&bytes[..cut]);
        }
        assert!(decode(&bytes[..bytes.len() / 2]).is_err());
        assert!(decode(b"definitely not a histogram").is_err());
    }

    #[test]
    fn random_and_mutated_bytes_never_panic() {
        // A small xorshift keeps the test free of dependencies and repeatable.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut h = new_histogram();
        for v in 1..500u64 {
            h.record(v * 31).unwrap();
        }
        let good = encode(&h).unwrap();
        for _ in 0..2_000 {
            let len = (next() % 256) as usize;
            let random: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let _ = decode(&random);
            let mut mutated = good.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() as usize) % mutated.len();
                mutated[i] = next() as u8;
            }
            // Decoding may fail or give another histogram; it must not panic or hang.
            let _ = decode(&mutated);
        }
    }
}
