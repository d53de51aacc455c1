//! Feeds arbitrary text, as the lines of a file of a few languages, to the highlighter a line at a time:
//! it must never panic, and every run list must cover its line exactly.
#![no_main]

use bb_core::fuzzing::highlight::{Language, SideHighlighter};
use libfuzzer_sys::fuzz_target;

const PATHS: &[&str] = &[
    "a.rs",
    "a.js",
    "a.py",
    "a.html",
    "a.sh",
    "a.json",
    "a.yaml",
    "a.c",
    "Makefile",
    "a.md",
    "a.ts",
    "a.tsx",
    "a.go",
    "a.java",
    "a.kt",
    "a.cs",
    "a.cpp",
    "a.rb",
    "a.php",
    "a.css",
    "a.scss",
    "a.sql",
    "a.xml",
    "a.toml",
    "a.lua",
    "a.swift",
    "a.scala",
    "a.groovy",
    "Dockerfile",
    "a.tf",
    "a.proto",
    "a.vue",
    "a.jsx",
    "a.pl",
    "a.ps1",
    "a.ini",
];

fuzz_target!(|input: (u8, bool, String)| {
    let (which, templates, text) = input;
    let Some(language) = Language::detect(PATHS[which as usize % PATHS.len()], text.lines().next()) else { return };
    let mut h = SideHighlighter::new(language, templates);
    for line in text.lines() {
        if let Ok(runs) = h.line(line) {
            let total: usize = runs.iter().map(|(n, _)| n).sum();
            assert_eq!(total, line.chars().count(), "runs cover the line");
        }
    }
});
