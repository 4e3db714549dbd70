//! BLAKE2b digests as Python's `hashlib.blake2b(data, digest_size=n).hexdigest()` gives them, with the
//! SIMD implementation (`blake2b_simd`): the results log's row keys and dataset fingerprints hash every
//! row's bytes, and CPython's portable C code took twice as long.

/// The longest BLAKE2b digest, in bytes.
pub const MAX_DIGEST_SIZE: usize = blake2b_simd::OUTBYTES;

/// An incremental BLAKE2b of `digest_size` bytes (1 to [`MAX_DIGEST_SIZE`]; checked by the caller).
pub fn hasher(digest_size: usize) -> blake2b_simd::State {
    blake2b_simd::Params::new()
        .hash_length(digest_size)
        .to_state()
}

/// The lowercase hex BLAKE2b digest of `data`, `digest_size` bytes long (checked by the caller).
pub fn hex_digest(data: &[u8], digest_size: usize) -> String {
    blake2b_simd::Params::new()
        .hash_length(digest_size)
        .hash(data)
        .to_hex()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values from CPython's hashlib.blake2b(data, digest_size=n).hexdigest().
    #[test]
    fn digests_are_hashlibs() {
        let block: Vec<u8> = (0..=255u8).cycle().take(2304).collect();
        let cases: [(&[u8], usize, &str); 5] = [
            (b"", 12, "b8e1dda3ac0aa3820ad2990b"),
            (b"abc", 12, "48b4f1f9042a2d5033b382b5"),
            (b"abc", 16, "cf4ab791c62b8d2b2109c90275287816"),
            (&block, 12, "05d82fcd01d641a22213ce69"),
            (b"a", 1, "de"),
        ];
        for (data, size, expected) in cases {
            assert_eq!(hex_digest(data, size), expected);
        }
        assert_eq!(
            hex_digest(&block, MAX_DIGEST_SIZE),
            "4e29dd7d8d66ccaaf8f97e8ad5f88ba7da84af1da89aad6e96583efdf62cf437\
             2bc2f2e5ae11e017a7f656957a36ca08d72488e496989413d2259831c6624428"
        );
    }

    #[test]
    fn updates_in_pieces_give_the_digest_of_the_whole() {
        let mut state = hasher(16);
        state.update(b"ab");
        state.update(b"c");
        assert_eq!(
            state.finalize().to_hex().as_str(),
            "cf4ab791c62b8d2b2109c90275287816"
        );
    }
}
