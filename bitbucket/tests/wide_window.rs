//! A window of a file's lines is bounded by its bytes, not only its line count: Bitbucket pages a file's
//! lines, but 2,000 lines of 15 KB are 30 MB. The client decodes a browse answer on its read thread as it
//! arrives, keeping the call's share (lines cut to their characters, no more text than the share's bytes),
//! so the driver never holds the 30 MB. Bitbucket is a small server here that answers every request with
//! such a page, written as it is sent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use bb_bitbucket::Client;
use bb_bitbucket::options::{Auth, BitbucketConfig, Secret};
use bb_core::{Decoded, FetchOutcome, FetchRequest, LineShare};
use bb_drive::{Bitbucket, Cancel};

const LINES: usize = 2_000;
const LINE_BYTES: usize = 15_000;

/// A server on 127.0.0.1 answering each request with a page of `LINES` lines of `LINE_BYTES` characters.
fn wide_bitbucket() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(8) {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
                    line.clear();
                }
                let text = "x".repeat(LINE_BYTES);
                let one = format!(r#"{{"text":"{text}"}}"#);
                let body_len = r#"{"lines":["#.len()
                    + LINES * one.len()
                    + (LINES - 1)
                    + format!(r#"],"start":0,"size":{LINES},"isLastPage":false,"nextPageStart":{LINES}}}"#).len();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {body_len}\r\n\r\n"
                );
                let _ = stream.write_all(br#"{"lines":["#);
                for i in 0..LINES {
                    if i > 0 {
                        let _ = stream.write_all(b",");
                    }
                    if stream.write_all(one.as_bytes()).is_err() {
                        return;
                    }
                }
                let tail = format!(r#"],"start":0,"size":{LINES},"isLastPage":false,"nextPageStart":{LINES}}}"#);
                let _ = stream.write_all(tail.as_bytes());
            });
        }
    });
    url
}

fn client(url: &str) -> Client {
    let mut c = BitbucketConfig::new(url, Auth::Token(Secret::new("t0ken"))).unwrap();
    c.rate_limit = None;
    Client::new(c).unwrap()
}

fn browse() -> FetchRequest {
    FetchRequest::get("/rest/api/latest/projects/BB/repos/api/browse/wide.txt", vec![])
}

#[test]
fn a_window_of_wide_lines_is_cut_as_it_is_read_and_holds_only_its_share() {
    let url = wide_bitbucket();
    let share = LineShare { bytes: 60_000, line_chars: 500 };
    let FetchOutcome::Response(r) = client(&url).fetch(browse().keeping_lines(share), None, &Cancel::new()) else {
        panic!("the page is read")
    };
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty(), "no bytes for the driver to hold or decode");
    let Some(Decoded::Lines(answer)) = r.decoded else { panic!("decoded as it was read") };
    // 500 characters (and a newline) a line: 60,000 bytes keep 120 lines; each was cut; the other 1,880 were
    // skipped as they arrived.
    assert_eq!(format!("{answer:?}"), "LinesAnswer(120 line(s) kept, 120 cut, 1880 dropped)");
}

#[test]
fn without_a_share_the_whole_page_comes_as_bytes() {
    // What the driver would hold for the same window without the share: the 30 MB.
    let url = wide_bitbucket();
    let FetchOutcome::Response(r) = client(&url).fetch(browse(), None, &Cancel::new()) else {
        panic!("the page is read")
    };
    assert!(r.decoded.is_none());
    assert!(r.body.len() > LINES * LINE_BYTES, "{} bytes", r.body.len());
}
