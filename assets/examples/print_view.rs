//! Prints the view page `ui://bb/view` to standard output, for the browser tests
//! (`cargo run -q -p bb-assets --example print_view > view.html`).

fn main() {
    print!("{}", bb_assets::VIEW_HTML);
}
