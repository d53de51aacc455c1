//! Comparing secrets in constant time: a leaf, used by the gate (the token) and OAuth (PKCE), so that
//! neither imports the other.

/// Compares two secrets in time that depends only on their lengths, never on where they differ.
pub(crate) fn same_secret(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    // Walk the expected secret's full length whatever the other holds.
    for (i, x) in b.iter().enumerate() {
        diff |= x ^ a.get(i).copied().unwrap_or(!x);
    }
    std::hint::black_box(diff) == 0
}
