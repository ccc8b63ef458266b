//! Answers of the authentication plugins the lean client speaks, as pure functions over
//! the password and the server's nonce: mysql_native_password, caching_sha2_password
//! (its scramble, and the password encrypted with the server's RSA key for full
//! authentication without TLS), client_ed25519 (MariaDB) and mysql_clear_password. The
//! cryptography is the RustCrypto and dalek crates'; only the protocols' compositions are
//! here.

use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};

pub const NATIVE: &str = "mysql_native_password";
pub const CACHING_SHA2: &str = "caching_sha2_password";
pub const ED25519: &str = "client_ed25519";
pub const CLEAR: &str = "mysql_clear_password";

/// The plugins the lean client can answer.
pub fn supported(plugin: &str) -> bool {
    matches!(plugin, NATIVE | CACHING_SHA2 | ED25519 | CLEAR)
}

/// The 20-byte scramble of native and caching_sha2 (servers send it NUL-terminated).
fn scramble20(nonce: &[u8]) -> &[u8] {
    &nonce[..nonce.len().min(20)]
}

/// mysql_native_password: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))); empty for an
/// empty password.
pub fn native_password(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    xor_scramble::<Sha1>(password, nonce, true)
}

/// caching_sha2_password's fast answer: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce);
/// empty for an empty password.
pub fn caching_sha2(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    xor_scramble::<Sha256>(password, nonce, false)
}

/// Both scrambles' composition with hash D: D(pw) XOR D(D(D(pw)) and the 20-byte scramble,
/// the scramble first when `scramble_first` (native) or last (caching_sha2).
fn xor_scramble<D: Digest>(password: &[u8], nonce: &[u8], scramble_first: bool) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h1 = D::digest(password);
    let h2 = D::digest(&h1);
    let mut h = D::new();
    if scramble_first {
        h.update(scramble20(nonce));
        h.update(&h2);
    } else {
        h.update(&h2);
        h.update(scramble20(nonce));
    }
    let h3 = h.finalize();
    h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect()
}

/// The password as sent in the clear (over TLS or a Unix socket only): NUL-terminated.
pub fn clear(password: &[u8]) -> Vec<u8> {
    let mut v = password.to_vec();
    v.push(0);
    v
}

/// caching_sha2_password's full authentication without TLS: the NUL-terminated password
/// XORed with the nonce (repeated), encrypted with the server's RSA public key (PEM, as
/// the server sends it or as its public_key.pem holds it) with OAEP padding.
pub fn rsa_password(
    password: &[u8],
    nonce: &[u8],
    public_key_pem: &str,
) -> Result<Vec<u8>, String> {
    use rsa::pkcs1::DecodeRsaPublicKey;
    use rsa::pkcs8::DecodePublicKey;
    let key = rsa::RsaPublicKey::from_public_key_pem(public_key_pem.trim())
        .or_else(|_| rsa::RsaPublicKey::from_pkcs1_pem(public_key_pem.trim()))
        .map_err(|e| format!("the server's RSA public key is not usable: {e}"))?;
    let nonce = scramble20(nonce);
    if nonce.is_empty() {
        return Err("the server sent no nonce".into());
    }
    let mut plain = clear(password);
    for (i, b) in plain.iter_mut().enumerate() {
        *b ^= nonce[i % nonce.len()];
    }
    key.encrypt(&mut rsa::rand_core::OsRng, rsa::Oaep::new::<Sha1>(), &plain)
        .map_err(|e| format!("cannot encrypt the password with the server's key: {e}"))
}

/// MariaDB's client_ed25519: an Ed25519 signature of the nonce with the key whose
/// expanded secret is SHA512(password) (the password stands where Ed25519 has its seed).
pub fn ed25519(password: &[u8], nonce: &[u8]) -> [u8; 64] {
    let (esk, vk) = ed25519_key(password);
    ed25519_dalek::hazmat::raw_sign::<Sha512>(&esk, nonce, &vk).to_bytes()
}

fn ed25519_key(
    password: &[u8],
) -> (
    ed25519_dalek::hazmat::ExpandedSecretKey,
    ed25519_dalek::VerifyingKey,
) {
    let h: [u8; 64] = Sha512::digest(password).into();
    let esk = ed25519_dalek::hazmat::ExpandedSecretKey::from_bytes(&h);
    let vk = ed25519_dalek::VerifyingKey::from(&esk);
    (esk, vk)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn caching_sha2_matches_an_independent_computation() {
        // Python: sha256(pw) XOR sha256(sha256(sha256(pw)) + nonce), nonce = bytes 1..=20.
        let nonce: Vec<u8> = (1..=20).collect();
        assert_eq!(
            hex(&caching_sha2(b"sbtest-pw", &nonce)),
            "4cd115b3782ec86103ff43589dbed44cb71912a7ad5aaefd780c91a63473d461"
        );
        // The server's NUL after the nonce is not part of it.
        let mut with_nul = nonce.clone();
        with_nul.push(0);
        assert_eq!(caching_sha2(b"x", &with_nul), caching_sha2(b"x", &nonce));
        assert!(caching_sha2(b"", &nonce).is_empty());
    }

    #[test]
    fn ed25519_key_is_the_one_mariadb_stores_and_signatures_verify() {
        use base64::Engine as _;
        // MariaDB 10.11: CREATE USER u IDENTIFIED VIA ed25519 USING PASSWORD('sbtest-pw')
        // stores this public key (base64 without padding) in mysql.user.
        let (_, vk) = ed25519_key(b"sbtest-pw");
        assert_eq!(
            base64::engine::general_purpose::STANDARD_NO_PAD.encode(vk.as_bytes()),
            "CgbAlymFzw5XchaRrdfnKH4ee3aUSl1Rh0pZDgBVaiI"
        );
        let nonce = [7u8; 32];
        let sig = ed25519_dalek::Signature::from_bytes(&ed25519(b"sbtest-pw", &nonce));
        vk.verify_strict(&nonce, &sig).unwrap();
        assert!(vk.verify_strict(&[8u8; 32], &sig).is_err());
    }

    #[test]
    fn rsa_password_decrypts_to_the_password_xor_nonce() {
        use rsa::pkcs8::EncodePublicKey;
        let private = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 1024).unwrap();
        let pem = private
            .to_public_key()
            .to_public_key_pem(rsa::pkcs8::LineEnding::LF)
            .unwrap();
        let nonce: Vec<u8> = (100..120).collect();
        let sealed = rsa_password(b"pw", &nonce, &pem).unwrap();
        let plain = private.decrypt(rsa::Oaep::new::<Sha1>(), &sealed).unwrap();
        assert_eq!(plain, vec![b'p' ^ 100, b'w' ^ 101, 102]);
        assert!(rsa_password(b"pw", &nonce, "not a key").is_err());
    }

    #[test]
    fn native_password_uses_the_first_20_bytes() {
        let nonce: Vec<u8> = (1..=21).collect();
        assert_eq!(
            native_password(b"pw", &nonce),
            native_password(b"pw", &nonce[..20])
        );
        assert_eq!(native_password(b"pw", &nonce).len(), 20);
        assert!(native_password(b"", &nonce).is_empty());
        assert_eq!(clear(b"pw"), b"pw\0");
        assert!(supported("client_ed25519") && !supported("auth_gssapi_client"));
    }
}
