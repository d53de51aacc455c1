//! Shared by the highlighting examples that read a tree of files (`#[path]`-included: not an example itself).

use std::path::{Path, PathBuf};

/// Every file under `path` (symbolic links not followed), in name order.
pub fn walk(path: &Path, out: &mut Vec<PathBuf>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return };
    if meta.is_file() {
        out.push(path.to_path_buf());
    } else if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else { return };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        children.sort();
        for child in children {
            walk(&child, out);
        }
    }
}
