//! Which files are pictures, of what type and size: a PNG, JPEG, GIF or WebP is told by its first bytes
//! (its signature, whatever its name says), an SVG by its name and its text. `get_file` hands a picture to
//! the model as MCP image content, and the file and diff views carry it for the page to draw as an image
//! (issue 54 item 13); an SVG is drawn only as an image, never as markup.
//!
//! Signatures and where each format says its size: PNG (RFC 2083 §3.1, IHDR first, width and height as
//! big-endian u32 at bytes 16 and 20); GIF (GIF89a spec §18, logical screen width and height, little-endian
//! u16 at 6 and 8); JPEG (ITU T.81 B.2.2: the frame header SOFn, height then width, big-endian u16); WebP
//! (Google's container spec: `RIFF....WEBP` then a `VP8 `, `VP8L` or `VP8X` chunk, each with its size).

/// The most bytes of a picture `get_file` hands the model; a larger one is said in one sentence.
pub const MODEL_BYTES: usize = 1024 * 1024;
/// The most bytes of a picture a view carries (base64 makes it a third larger in the answer).
pub const VIEW_BYTES: usize = 2 * 1024 * 1024;

/// A picture's type and, when its header says, its size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Picture {
    /// The MIME type: `image/png`, `image/jpeg`, `image/gif`, `image/webp` or `image/svg+xml`.
    pub mime: &'static str,
    /// The format's name as people say it: PNG, JPEG, GIF, WebP, SVG.
    pub name: &'static str,
    /// Width and height in pixels, when the header holds them.
    pub size: Option<(u32, u32)>,
}

impl Picture {
    /// "a PNG picture, 10×10 pixels" (the size when known).
    pub fn words(&self) -> String {
        match self.size {
            Some((w, h)) => format!("a {} picture, {w}×{h} pixels", self.name),
            None => format!("a {} picture", self.name),
        }
    }

    /// The part a view carries: `{mimeType, name, width, height}` (the bytes added by the caller).
    pub fn to_value(self) -> serde_json::Value {
        serde_json::json!({"mimeType": self.mime, "name": self.name,
                           "width": self.size.map(|s| s.0), "height": self.size.map(|s| s.1)})
    }
}

/// Whether a file by this name may be a picture bb draws: worth reading its bytes when Bitbucket says it is
/// binary (or, for an SVG, text).
pub fn named(path: &str) -> bool {
    let ext = extension(path);
    matches!(ext.as_str(), "png" | "jpg" | "jpeg" | "jpe" | "gif" | "webp" | "svg")
}

/// Whether the name says SVG (Bitbucket serves an SVG as text lines).
pub fn is_svg_name(path: &str) -> bool {
    extension(path) == "svg"
}

fn extension(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

/// The picture these bytes are (their first bytes suffice for the size), or `None` when they are none of
/// the formats bb draws. An SVG is believed by its name and an `<svg` among its first 4 KiB.
pub fn of(path: &str, bytes: &[u8]) -> Option<Picture> {
    let be16 = |i: usize| bytes.get(i..i + 2).map(|b| u32::from(u16::from_be_bytes([b[0], b[1]])));
    let le16 = |i: usize| bytes.get(i..i + 2).map(|b| u32::from(u16::from_le_bytes([b[0], b[1]])));
    let be32 = |i: usize| bytes.get(i..i + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let pair = |w: Option<u32>, h: Option<u32>| w.zip(h).filter(|(w, h)| *w > 0 && *h > 0);
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some(Picture { mime: "image/png", name: "PNG", size: pair(be32(16), be32(20)) });
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Some(Picture { mime: "image/gif", name: "GIF", size: pair(le16(6), le16(8)) });
    }
    if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        return Some(Picture { mime: "image/jpeg", name: "JPEG", size: jpeg_size(bytes, be16) });
    }
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Some(Picture { mime: "image/webp", name: "WebP", size: webp_size(bytes) });
    }
    if is_svg_name(path) {
        let head = &bytes[..bytes.len().min(4096)];
        let text = String::from_utf8_lossy(head).to_ascii_lowercase();
        if text.contains("<svg") {
            return Some(Picture { mime: "image/svg+xml", name: "SVG", size: None });
        }
    }
    None
}

/// A JPEG's size from its first frame header (SOF0–SOF15 but DHT, JPG and DAC), walking the segments.
fn jpeg_size(bytes: &[u8], be16: impl Fn(usize) -> Option<u32>) -> Option<(u32, u32)> {
    let mut i = 2;
    while i + 4 <= bytes.len() {
        if bytes[i] != 0xff {
            return None;
        }
        let marker = bytes[i + 1];
        if marker == 0xff {
            i += 1;
            continue;
        }
        let len = be16(i + 2)? as usize;
        if (0xc0..=0xcf).contains(&marker) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
            let (h, w) = (be16(i + 5)?, be16(i + 7)?);
            return (w > 0 && h > 0).then_some((w, h));
        }
        i += 2 + len;
    }
    None
}

/// A WebP's size from its first chunk: lossy (`VP8 `), lossless (`VP8L`) or extended (`VP8X`).
fn webp_size(b: &[u8]) -> Option<(u32, u32)> {
    let u24 = |i: usize| b.get(i..i + 3).map(|x| u32::from(x[0]) | u32::from(x[1]) << 8 | u32::from(x[2]) << 16);
    let size = match b.get(12..16)? {
        b"VP8X" => (u24(24)? + 1, u24(27)? + 1),
        b"VP8L" => {
            let v = b.get(21..25).map(|x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]))?;
            ((v & 0x3fff) + 1, ((v >> 14) & 0x3fff) + 1)
        }
        b"VP8 " => {
            let w = b.get(26..28).map(|x| u32::from(u16::from_le_bytes([x[0], x[1]])) & 0x3fff)?;
            let h = b.get(28..30).map(|x| u32::from(u16::from_le_bytes([x[0], x[1]])) & 0x3fff)?;
            (w, h)
        }
        _ => return None,
    };
    Some(size).filter(|(w, h)| *w > 0 && *h > 0)
}

/// A byte count as people read it: "812 bytes", "4.2 KB", "1.3 MB" (Bitbucket's file size, in 1,024s).
pub fn bytes_words(n: u64) -> String {
    if n < 1024 {
        format!("{n} bytes")
    } else if n < 1024 * 1024 {
        format!("{:.1} KB", n as f64 / 1024.0)
    } else {
        format!("{:.1} MB", n as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_png_is_told_by_its_signature_and_sized_by_its_header() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(12u32.to_be_bytes());
        png.extend(7u32.to_be_bytes());
        let p = of("logo.bin", &png).unwrap();
        assert_eq!((p.mime, p.size), ("image/png", Some((12, 7))));
        assert_eq!(p.words(), "a PNG picture, 12×7 pixels");
    }

    #[test]
    fn a_gif_a_jpeg_and_a_webp_say_their_sizes() {
        let gif = b"GIF89a\x05\x00\x03\x00".to_vec();
        assert_eq!(of("a.gif", &gif).unwrap().size, Some((5, 3)));
        // SOI, an APP0 of 4 bytes, then SOF0: length 17, precision 8, height 20, width 30.
        let jpeg = [0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xc0, 0, 17, 8, 0, 20, 0, 30];
        assert_eq!(of("a.jpg", &jpeg).unwrap().size, Some((30, 20)));
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X\0\0\0\0\0\0\0\0".to_vec();
        webp.extend([99, 0, 0, 49, 0, 0]);
        assert_eq!(of("a.webp", &webp).unwrap().size, Some((100, 50)));
    }

    #[test]
    fn an_svg_needs_its_name_and_its_element_and_other_bytes_are_no_picture() {
        assert_eq!(of("i.svg", b"<?xml version=\"1.0\"?><svg xmlns=\"\"/>").unwrap().mime, "image/svg+xml");
        assert!(of("i.txt", b"<svg/>").is_none());
        assert!(of("i.svg", b"not a picture").is_none());
        assert!(of("a.png", b"\x00\x01binary").is_none());
        assert!(named("assets/icon.PNG") && named("x/y.webp") && !named("x/.png") && !named("lib.rs"));
    }

    #[test]
    fn sizes_read_as_bitbucket_writes_them() {
        assert_eq!(bytes_words(812), "812 bytes");
        assert_eq!(bytes_words(4300), "4.2 KB");
        assert_eq!(bytes_words(3 * 1024 * 1024), "3.0 MB");
    }
}
