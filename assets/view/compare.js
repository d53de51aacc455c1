// Two refs' diff (kind compare, compare_refs' answer): Bitbucket's Compare page, its Diff tab, drawn by
// the diff module (diff.js), which reads `compare` in the data for the header and links. A kind of
// its own in bb's table because a kind takes ONE data tool's arguments and compare_refs' are two
// refs (views::compare says why); the drawing is one module, so the two diffs never drift apart.
registerKind("compare", diffView.draw);
