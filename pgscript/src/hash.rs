//! The hash functions of the expression language, FNV-1a and MurmurHash2 (64-bit) over
//! an integer's eight bytes with a seed, and `permute`: a pseudorandom bijection of
//! [0, size) chosen by a seed.

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a of `v`'s eight bytes, least significant first, from the offset basis xor `seed`.
pub fn fnv1a(v: i64, seed: i64) -> i64 {
    let mut h = FNV_OFFSET ^ seed as u64;
    let mut x = v as u64;
    for _ in 0..8 {
        h ^= x & 0xff;
        h = h.wrapping_mul(FNV_PRIME);
        x >>= 8;
    }
    h as i64
}

/// MurmurHash64A of `v` as one eight-byte block, with `seed`.
pub fn murmur2(v: i64, seed: i64) -> i64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = (seed as u64) ^ 8u64.wrapping_mul(M);
    let mut k = v as u64;
    k = k.wrapping_mul(M);
    k ^= k >> R;
    k = k.wrapping_mul(M);
    h ^= k;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h as i64
}

/// A 64-bit mixer (splitmix64's finaliser): the round keys of [`permute`].
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The position of `i` (taken modulo `size`) in a pseudorandom permutation of
/// 0..size chosen by `seed`: a balanced Feistel network over the smallest power of four
/// covering `size`, walked until it lands inside (so no two inputs meet and none is
/// left out). `size` must be positive.
pub fn permute(i: i64, size: i64, seed: i64) -> i64 {
    debug_assert!(size > 0);
    let n = size as u64;
    let x = i.rem_euclid(size) as u64;
    if n == 1 {
        return 0;
    }
    // Half-widths of the network: 2 * half bits cover n.
    let bits = 64 - (n - 1).leading_zeros();
    let half = bits.div_ceil(2);
    let mask = (1u64 << half) - 1;
    let mut v = x;
    loop {
        let (mut l, mut r) = (v >> half, v & mask);
        for round in 0..4u64 {
            let f = mix(r ^ mix(seed as u64 ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15))) & mask;
            (l, r) = (r, l ^ f);
        }
        v = (l << half) | r;
        if v < n {
            return v as i64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_hash_examples_hold() {
        assert_eq!(murmur2(10, 5432), -5817877081768721676);
        assert_eq!(fnv1a(10, 5432), -7793829335365542153);
    }

    #[test]
    fn permute_is_a_bijection_for_every_size() {
        for size in [1i64, 2, 3, 7, 10, 16, 17, 100, 1000, 4097] {
            for seed in [0i64, 1, 5432, -7] {
                let mut seen = vec![false; size as usize];
                for i in 0..size {
                    let p = permute(i, size, seed);
                    assert!((0..size).contains(&p), "{i} of {size} -> {p}");
                    assert!(!seen[p as usize], "{p} twice for size {size}");
                    seen[p as usize] = true;
                }
            }
        }
        // Out-of-range inputs are taken modulo the size.
        assert_eq!(permute(-1, 10, 3), permute(9, 10, 3));
        assert_eq!(permute(25, 10, 3), permute(5, 10, 3));
    }

    #[test]
    fn permute_depends_on_the_seed_and_scatters() {
        let a: Vec<i64> = (0..100).map(|i| permute(i, 100, 1)).collect();
        let b: Vec<i64> = (0..100).map(|i| permute(i, 100, 2)).collect();
        assert_ne!(a, b);
        let fixed = a
            .iter()
            .enumerate()
            .filter(|(i, p)| *i as i64 == **p)
            .count();
        assert!(fixed < 20, "{fixed} fixed points of 100");
    }
}
